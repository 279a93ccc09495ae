//! Lens labels through the catalog, over the memory stores: set, move,
//! roll back and remove them, their history, who may move a protected
//! one (the owner; an AI Lenser only with `can_move_protected_labels`),
//! and reads by label everywhere a lens is read: `run_lens`,
//! `find_and_run_lens`, `get_lens_version`, `diff_lens_versions`,
//! `get_lens`, `prompts/get` and `completion/complete` by
//! `{lens_id}@{label}`, and resources by `?label=`.

use std::sync::Arc;

use lf_core::{LenserId, Principal, Scopes};
use lf_tools::{Catalog, CatalogOptions, LfServer};
use serde_json::{Value, json};

mod common;
use common::wire::Wire;
use common::{call, err, ok};

/// A template in the voice of `word`, with a Tone whose options `tones` are.
fn body(word: &str) -> String {
    format!("Answer [[Question]] in the voice of {word}, in a [[Tone]] tone, briefly and with care.")
}

fn tone(options: &[&str]) -> Value {
    json!([{"label": "Tone", "options": options}])
}

fn lenser() -> Principal {
    Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE }
}

fn server(services: &Arc<lf_tools::Services>, principal: Principal) -> LfServer {
    LfServer::new(Arc::new(Catalog::new()), services.clone(), CatalogOptions::default(), principal)
}

/// Alice's lens at `visibility` with two versions, "one" (tones calm and
/// cheerful) and "two" (calm and curt): its id and the two versions'
/// (id, semver).
async fn lens(s: &LfServer, visibility: &str) -> (String, (String, String), (String, String)) {
    let made = ok(
        s,
        "create_lens",
        json!({"title": "Voices", "template_body": body("one"), "visibility": visibility, "params": tone(&["calm", "cheerful"])}),
    )
    .await;
    let id = made["id"].as_str().unwrap().to_owned();
    let v1 = &made["head_version"];
    let v1 = (v1["id"].as_str().unwrap().to_owned(), v1["semver"].as_str().unwrap().to_owned());
    let up = ok(
        s,
        "update_lens",
        json!({"lens_id": id, "template_body": body("two"), "params": tone(&["calm", "curt"])}),
    )
    .await;
    let v2 = (
        up["head_version_id"].as_str().unwrap().to_owned(),
        up["lens"]["head_semver"].as_str().unwrap().to_owned(),
    );
    assert_ne!(v1.1, v2.1);
    (id, v1, v2)
}

fn values() -> Value {
    json!({"Question": "why", "Tone": "calm"})
}

/// (label, from semver, to semver) of each move of a history page.
fn moves(page: &Value) -> Vec<(String, Option<String>, Option<String>)> {
    let semver = |v: &Value| v["semver"].as_str().map(str::to_owned);
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["label"].as_str().unwrap().to_owned(), semver(&m["from"]), semver(&m["to"])))
        .collect()
}

fn mv(label: &str, from: Option<&str>, to: Option<&str>) -> (String, Option<String>, Option<String>) {
    (label.to_owned(), from.map(str::to_owned), to.map(str::to_owned))
}

#[tokio::test]
async fn labels_move_roll_back_and_keep_their_history() {
    let services = Arc::new(common::memory_services());
    let alice_id = LenserId::new();
    let a = server(&services, Principal::Lenser { id: alice_id, scopes: Scopes::READ_WRITE });
    let (id, (v1, s1), (v2, s2)) = lens(&a, "public").await;

    let e =
        err(&a, "run_lens", json!({"lens_id": id, "label": "production", "param_values": values()})).await;
    assert_eq!(e["code"], "NOT_FOUND");
    assert!(e["message"].as_str().unwrap().contains("no labels yet"), "{e}");

    let set = ok(&a, "set_lens_label", json!({"lens_id": id, "label": "production", "version": s1})).await;
    assert_eq!(set["label"]["name"], "production");
    assert_eq!((&set["label"]["version_id"], &set["label"]["semver"]), (&json!(v1), &json!(s1)));
    assert_eq!(set["label"]["protected"], true, "production is protected on every lens");
    assert_eq!(set["label"]["moved_by"], alice_id.to_string());
    assert!(set["moved"]["from"].is_null() && set["moved"]["to"]["id"] == v1.as_str(), "{set}");
    let again = ok(&a, "set_lens_label", json!({"lens_id": id, "label": "production", "version": v1})).await;
    assert!(again["moved"].is_null(), "already there, by version id: no move recorded: {again}");
    ok(&a, "set_lens_label", json!({"lens_id": id, "label": "staging", "version": s2})).await;

    // Reads by label say which version they used.
    let run =
        ok(&a, "run_lens", json!({"lens_id": id, "label": "production", "param_values": values()})).await;
    assert!(run["resolved_prompt"].as_str().unwrap().contains("voice of one"), "{run}");
    assert_eq!((&run["version_id"], &run["semver"]), (&json!(v1), &json!(s1)));
    let head = ok(&a, "run_lens", json!({"lens_id": id, "label": "latest", "param_values": values()})).await;
    assert_eq!(head["semver"], s2.as_str(), "latest is the head");
    let found = ok(
        &a,
        "find_and_run_lens",
        json!({"query": "voices", "label": "production", "param_values": values()}),
    )
    .await;
    assert_eq!(
        (&found["status"], &found["version_id"], &found["semver"]),
        (&json!("ready"), &json!(v1), &json!(s1))
    );
    assert!(found["resolved_prompt"].as_str().unwrap().contains("voice of one"));
    let got = ok(&a, "get_lens_version", json!({"lens_id": id, "label": "staging"})).await;
    assert_eq!((&got["id"], &got["semver"]), (&json!(v2), &json!(s2)));
    let diff = ok(
        &a,
        "diff_lens_versions",
        json!({"lens_id": id, "from_label": "production", "to_label": "staging"}),
    )
    .await;
    assert_eq!((&diff["from"]["semver"], &diff["to"]["semver"]), (&json!(s1), &json!(s2)));
    assert!(
        diff["body_diff"].as_str().unwrap().contains("+Answer [[Question]] in the voice of two"),
        "{diff}"
    );
    let mixed = ok(&a, "diff_lens_versions", json!({"lens_id": id, "from_label": "production"})).await;
    assert_eq!(mixed["to"]["semver"], s2.as_str(), "to is the head when left out");
    let shown = ok(&a, "get_lens", json!({"lens_id": id})).await;
    assert_eq!(
        shown["labels"],
        json!([
            {"name": "production", "version_id": v1, "semver": s1, "protected": true},
            {"name": "staging", "version_id": v2, "semver": s2, "protected": false},
        ])
    );

    // Roll out, then roll back: one call each, both recorded.
    let out = ok(&a, "set_lens_label", json!({"lens_id": id, "label": "production", "version": s2})).await;
    assert_eq!((&out["moved"]["from"]["semver"], &out["moved"]["to"]["semver"]), (&json!(s1), &json!(s2)));
    let run =
        ok(&a, "run_lens", json!({"lens_id": id, "label": "production", "param_values": values()})).await;
    assert!(run["resolved_prompt"].as_str().unwrap().contains("voice of two"));
    ok(&a, "set_lens_label", json!({"lens_id": id, "label": "production", "version": s1})).await;
    ok(&a, "remove_lens_label", json!({"lens_id": id, "label": "staging"})).await;

    let listed = ok(&a, "list_lens_labels", json!({"lens_id": id})).await;
    let names: Vec<&str> =
        listed["labels"].as_array().unwrap().iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["production"]);
    assert_eq!(listed["labels"][0]["semver"], s1.as_str());
    assert_eq!(
        moves(&listed["history"]),
        [
            mv("staging", Some(&s2), None),
            mv("production", Some(&s2), Some(&s1)),
            mv("production", Some(&s1), Some(&s2)),
            mv("staging", None, Some(&s2)),
            mv("production", None, Some(&s1)),
        ],
        "newest first"
    );
    let first = &listed["history"]["items"][4];
    assert_eq!((&first["by"], &first["by_agent"]), (&json!(alice_id.to_string()), &Value::Null));
    let page =
        ok(&a, "list_lens_labels", json!({"lens_id": id, "label": "production", "limit": 2, "offset": 1}))
            .await;
    assert_eq!(
        moves(&page["history"]),
        [mv("production", Some(&s1), Some(&s2)), mv("production", None, Some(&s1))]
    );
    assert_eq!((&page["history"]["total"], &page["history"]["has_more"]), (&json!(3), &json!(false)));

    // Mistakes.
    let e = err(&a, "run_lens", json!({"lens_id": id, "label": "staging", "param_values": values()})).await;
    assert_eq!((&e["code"], &e["details"]["labels"]), (&json!("NOT_FOUND"), &json!(["production"])), "{e}");
    assert!(e["message"].as_str().unwrap().contains("its labels are production"), "{e}");
    for tool in ["get_lens_version", "diff_lens_versions"] {
        let args = json!({"lens_id": id, "label": "canary", "from_label": "canary"});
        let mut args = args.as_object().unwrap().clone();
        args.remove(if tool == "get_lens_version" { "from_label" } else { "label" });
        let e = err(&a, tool, Value::Object(args)).await;
        assert_eq!(
            (&e["code"], &e["details"]["labels"]),
            (&json!("NOT_FOUND"), &json!(["production"])),
            "{tool}: {e}"
        );
    }
    let e = err(&a, "set_lens_label", json!({"lens_id": id, "label": "latest", "version": s1})).await;
    assert_eq!((&e["code"], &e["details"]["field"]), (&json!("INVALID_ARGUMENT"), &json!("label")));
    assert!(e["message"].as_str().unwrap().contains("reserved"), "{e}");
    let e = err(&a, "remove_lens_label", json!({"lens_id": id, "label": "latest"})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENT");
    let e = err(&a, "remove_lens_label", json!({"lens_id": id, "label": "staging"})).await;
    assert_eq!((&e["code"], &e["details"]["labels"]), (&json!("NOT_FOUND"), &json!(["production"])));
    let e = err(&a, "set_lens_label", json!({"lens_id": id, "label": "Prod", "version": s1})).await;
    assert_eq!((&e["code"], &e["details"]["field"]), (&json!("INVALID_ARGUMENT"), &json!("label")));
    let e = err(&a, "set_lens_label", json!({"lens_id": id, "label": "beta", "version": "9.9.9"})).await;
    assert_eq!(e["code"], "NOT_FOUND");
    let e = err(
        &a,
        "set_lens_label",
        json!({"lens_id": id, "label": "production", "version": s1, "protected": false}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_ARGUMENT", "production cannot be unprotected: {e}");
    let both = [
        ("get_lens_version", json!({"lens_id": id, "semver": s1, "label": "production"})),
        ("get_lens_version", json!({"lens_id": id})),
        (
            "run_lens",
            json!({"lens_id": id, "version_id": v1, "label": "production", "param_values": values()}),
        ),
        ("diff_lens_versions", json!({"lens_id": id, "from": s1, "from_label": "production"})),
        ("diff_lens_versions", json!({"lens_id": id, "to": s1})),
    ];
    for (tool, args) in both {
        assert_eq!(err(&a, tool, args.clone()).await["code"], "BAD_INPUT", "{tool} {args}");
    }
}

#[tokio::test]
async fn only_the_owner_moves_protected_labels_and_agents_by_their_policy() {
    let services = Arc::new(common::memory_services());
    let alice_id = LenserId::new();
    let a = server(&services, Principal::Lenser { id: alice_id, scopes: Scopes::READ_WRITE });
    let b = server(&services, lenser());
    let (id, _, (_, s2)) = lens(&a, "public").await;
    let (secret, _, _) = lens(&a, "private").await;
    ok(&a, "set_lens_label", json!({"lens_id": id, "label": "production", "version": s2})).await;
    let marked = ok(
        &a,
        "set_lens_label",
        json!({"lens_id": id, "label": "staging", "version": s2, "protected": true}),
    )
    .await;
    assert_eq!(marked["label"]["protected"], true);

    // Another lenser reads a public lens's labels, moves none, and sees
    // nothing of a private lens.
    let seen = ok(&b, "list_lens_labels", json!({"lens_id": id})).await;
    assert_eq!(seen["labels"].as_array().unwrap().len(), 2);
    for label in ["production", "canary"] {
        let e = err(&b, "set_lens_label", json!({"lens_id": id, "label": label, "version": s2})).await;
        assert_eq!(e["code"], "FORBIDDEN", "{e}");
        assert!(e["message"].as_str().unwrap().contains(&alice_id.to_string()), "names the owner: {e}");
    }
    assert_eq!(
        err(&b, "remove_lens_label", json!({"lens_id": id, "label": "staging"})).await["code"],
        "FORBIDDEN"
    );
    assert_eq!(err(&b, "list_lens_labels", json!({"lens_id": secret})).await["code"], "NOT_FOUND");
    assert_eq!(
        err(&b, "set_lens_label", json!({"lens_id": secret, "label": "x", "version": s2})).await["code"],
        "NOT_FOUND"
    );

    // Alice's AI Lenser moves unprotected labels; protected ones only once
    // its policy says so.
    let made = ok(&a, "create_ai_lenser", json!({"handle": "releaser", "display_name": "Releaser"})).await;
    let agent = made["ai_lenser_id"].as_str().unwrap().to_owned();
    assert_eq!(
        ok(&a, "get_ai_lenser", json!({"ai_lenser_id": agent})).await["policy"]["can_move_protected_labels"],
        false
    );
    for tool in ["set_lens_label", "remove_lens_label"] {
        // remove_lens_label is destructive: its grant is confirmed.
        ok(&a, "assign_agent_tool", json!({"ai_lenser_id": agent, "tool_id": tool, "confirm": true})).await;
    }
    let act = |action: &'static str, metadata: Value| {
        let (a, agent) = (a.clone(), agent.clone());
        async move {
            call(
                &a,
                "run_agent_action",
                json!({"ai_lenser_id": agent, "action_type": action, "metadata": metadata}),
            )
            .await
        }
    };
    let (failed, canary) =
        act("set_lens_label", json!({"lens_id": id, "label": "canary", "version": s2})).await;
    assert!(!failed, "{canary}");
    assert_eq!(canary["result"]["moved"]["by_agent"], agent.as_str());
    assert_eq!(canary["result"]["moved"]["by"], alice_id.to_string(), "for its owner");
    for (tool, args) in [
        ("set_lens_label", json!({"lens_id": id, "label": "production", "version": "1.0.0"})),
        ("remove_lens_label", json!({"lens_id": id, "label": "staging"})),
    ] {
        let (failed, refused) = act(tool, args).await;
        assert!(failed, "{refused}");
        assert_eq!(refused["code"], "PERMISSION_DENIED", "{refused}");
        let message = refused["message"].as_str().unwrap();
        assert!(
            message.contains(&alice_id.to_string()) && message.contains("can_move_protected_labels"),
            "{message}"
        );
        assert_eq!(refused["details"]["owner"], alice_id.to_string());
    }
    let flagged = ok(
        &a,
        "update_ai_lenser",
        json!({"ai_lenser_id": agent, "patch": {"can_move_protected_labels": true}}),
    )
    .await;
    assert_eq!(flagged["patched_keys"], json!(["can_move_protected_labels"]));
    assert_eq!(
        ok(&a, "get_ai_lenser", json!({"ai_lenser_id": agent})).await["policy"]["can_move_protected_labels"],
        true
    );
    let (failed, moved) =
        act("set_lens_label", json!({"lens_id": id, "label": "production", "version": "1.0.0"})).await;
    assert!(!failed, "{moved}");
    assert_eq!(moved["result"]["label"]["moved_by_agent"], agent.as_str());
    let (failed, removed) = act("remove_lens_label", json!({"lens_id": id, "label": "staging"})).await;
    assert!(!failed, "{removed}");
    assert!(removed["result"]["removed"]["to"].is_null());
}

#[tokio::test]
async fn prompts_completions_and_resources_by_label() {
    let services = Arc::new(common::memory_services());
    let a = server(&services, lenser());
    let (id, _, (_, s2)) = lens(&a, "public").await;
    ok(&a, "set_lens_label", json!({"lens_id": id, "label": "production", "version": "1.0.0"})).await;
    let b = server(&services, lenser());
    for version in ["2025-11-25", "2026-07-28"] {
        let mut w = Wire::open(b.clone(), version).await;
        let args = json!({"Question": "why", "Tone": "calm"});
        let text = |r: &Value| r["messages"][0]["content"]["text"].as_str().unwrap().to_owned();
        let old =
            w.result("prompts/get", json!({"name": format!("{id}@production"), "arguments": args})).await;
        assert!(text(&old).contains("voice of one"), "{old}");
        assert!(old["description"].as_str().unwrap().ends_with("1.0.0"), "{old}");
        let head = w.result("prompts/get", json!({"name": id, "arguments": args})).await;
        assert!(text(&head).contains("voice of two"));
        let latest =
            w.result("prompts/get", json!({"name": format!("{id}@latest"), "arguments": args})).await;
        assert_eq!(text(&latest), text(&head));
        let e = w.error("prompts/get", json!({"name": format!("{id}@staging"), "arguments": args})).await;
        assert!(e["message"].as_str().unwrap().contains("its labels are production"), "{e}");
        assert_eq!(e["data"]["code"], "NOT_FOUND");
        let e = w.error("prompts/get", json!({"name": format!("{id}@Bad label"), "arguments": args})).await;
        assert_eq!(e["data"]["code"], "INVALID_ARGUMENT", "{e}");

        let complete = |name: String| json!({"ref": {"type": "ref/prompt", "name": name}, "argument": {"name": "Tone", "value": "c"}});
        let at = w.result("completion/complete", complete(format!("{id}@production"))).await;
        assert_eq!(at["completion"]["values"], json!(["calm", "cheerful"]), "{at}");
        let now = w.result("completion/complete", complete(id.clone())).await;
        assert_eq!(now["completion"]["values"], json!(["calm", "curt"]));

        let uri = format!("lenserfight://lenses/{id}?label=production");
        let read = w.result("resources/read", json!({"uri": uri})).await;
        let doc = read["contents"][0]["text"].as_str().unwrap();
        assert!(doc.contains("version 1.0.0 (label production)") && doc.contains("voice of one"), "{doc}");
        assert_eq!(read["contents"][0]["uri"], uri.as_str());
        let read = w
            .result("resources/read", json!({"uri": format!("lenserfight://lenses/{id}?label=latest")}))
            .await;
        assert!(read["contents"][0]["text"].as_str().unwrap().contains(&format!("version {s2}")));
        let missing = format!("lenserfight://lenses/{id}?label=staging");
        let e = w.error("resources/read", json!({"uri": missing})).await;
        assert!(e["message"].as_str().unwrap().contains("its labels are production"), "{e}");
        assert_eq!((&e["data"]["uri"], &e["data"]["labels"]), (&json!(missing), &json!(["production"])));
        let templates = w.result("resources/templates/list", json!({})).await;
        assert!(
            templates["resourceTemplates"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["uriTemplate"] == "lenserfight://lenses/{lens_id}{?label}"),
            "{templates}"
        );
    }
}
