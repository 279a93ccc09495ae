//! The node catalog as data: every entry is complete and its example
//! passes its own type's config check.

use std::collections::HashSet;

use lf_workflow::catalog::{Category, ConnectorUse, FieldKind, catalog, check_config, normalize_config};

#[test]
fn every_example_config_passes_its_own_check() {
    for e in catalog().entries() {
        let config = e
            .example
            .config
            .as_object()
            .unwrap_or_else(|| panic!("{}: example config is an object", e.node_type));
        let has_connector = e.connector != ConnectorUse::None;
        let problems = check_config(e, config, has_connector);
        assert!(problems.is_empty(), "{}: {problems:?}", e.node_type);
        // Normalizing is idempotent and keeps the check passing.
        let n = normalize_config(e, config);
        assert_eq!(normalize_config(e, &n), n, "{}", e.node_type);
        assert!(check_config(e, &n, has_connector).is_empty(), "{}: normalized", e.node_type);
        // The defaults alone pass whenever nothing is required.
        if e.required_config().next().is_none() && e.rule.is_none() {
            assert!(
                check_config(e, &e.default_config(), has_connector).is_empty(),
                "{}: defaults",
                e.node_type
            );
        }
    }
}

#[test]
fn every_entry_is_complete() {
    let mut names = HashSet::new();
    for e in catalog().entries() {
        assert!(names.insert(e.node_type), "{} twice", e.node_type);
        for s in [e.display_name, e.description, e.example.scenario, e.example_use_case] {
            assert!(!s.is_empty(), "{}: a text is missing", e.node_type);
        }
        assert!(e.docs_link().ends_with(&format!("workflow-nodes.md#{}", e.node_type)));
        assert!(!e.capabilities.is_empty() || e.category == Category::Lens, "{}: capabilities", e.node_type);
        for f in &e.fields {
            assert!(!f.description.is_empty(), "{}.{}", e.node_type, f.key);
            assert_eq!(
                f.kind == FieldKind::Select,
                !f.options.is_empty(),
                "{}.{}: options go with select",
                e.node_type,
                f.key
            );
            assert!(
                !(f.required && f.default.is_some()),
                "{}.{}: a required field has no default",
                e.node_type,
                f.key
            );
            if let Some(d) = &f.default {
                let one = serde_json::Map::from_iter([(f.key.to_owned(), d.clone())]);
                let problems = check_config(e, &one, true);
                assert!(
                    problems.iter().all(|p| p.field != f.key),
                    "{}.{}: its default passes: {problems:?}",
                    e.node_type,
                    f.key
                );
            }
        }
        match e.connector {
            ConnectorUse::None => {}
            ConnectorUse::Optional(p) | ConnectorUse::Required(p) => assert!(!p.is_empty()),
        }
    }
}

#[test]
fn the_kept_types() {
    let mut kept: Vec<&str> = catalog().entries().iter().map(|e| e.node_type).collect();
    kept.sort();
    assert_eq!(kept.len(), 55, "{kept:?}");
    for dropped in [
        "code",
        "embedding",
        "sql_query",
        "notion_write",
        "text_to_image",
        "secret_resolver",
        "retry",
        "sms_send",
    ] {
        assert!(catalog().get(dropped).is_none(), "{dropped} is not executed here");
    }
}

#[test]
fn contender_run_needs_a_battle_and_a_contender_given_as_ids_or_placeholders() {
    let e = catalog().get("contender_run").expect("kept");
    assert_eq!(e.category, Category::Battle);
    assert_eq!(catalog().get("answer_battle").map(|a| a.node_type), Some("contender_run"), "by alias");
    let check = |config: serde_json::Value| {
        let mut problems: Vec<String> =
            check_config(e, config.as_object().unwrap(), false).into_iter().map(|p| p.field).collect();
        problems.sort();
        problems
    };
    assert_eq!(check(serde_json::json!({})), ["battle_id", "contender_id"]);
    let id = "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d";
    // The original's camelCase names are the same fields, renamed.
    let original = serde_json::json!({"battleId": id, "contenderId": "[[contender_id]]"});
    assert!(check(original.clone()).is_empty());
    let renamed = normalize_config(e, original.as_object().unwrap());
    assert_eq!(
        (renamed["battle_id"].as_str(), renamed["contender_id"].as_str()),
        (Some(id), Some("[[contender_id]]"))
    );
    // Text that is neither an id nor a placeholder is refused before any run.
    assert_eq!(check(serde_json::json!({"battle_id": "the big one", "contender_id": id})), ["battle_id"]);
    assert_eq!(check(serde_json::json!({"battle_id": id, "contender_id": "A"})), ["contender_id"]);
}

#[test]
fn a_type_sits_in_the_category_a_person_looks_for_it_in() {
    let moved = [
        ("http_request", Category::Integration),
        ("webhook_sender", Category::Integration),
        ("graphql_request", Category::Integration),
        ("cache_read", Category::Storage),
        ("cache_write", Category::Storage),
        ("split_in_batches", Category::Data),
    ];
    for (t, category) in moved {
        assert_eq!(catalog().get(t).map(|e| e.category), Some(category), "{t}");
    }
    // Storage is what this server keeps for a workflow's owner; a call to
    // another service is an integration, whatever it writes there.
    let storage: Vec<&str> = catalog().in_category("storage").map(|e| e.node_type).collect();
    assert_eq!(storage, ["kv_store_read", "kv_store_write", "cache_read", "cache_write"]);
}
