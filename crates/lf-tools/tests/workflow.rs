//! The Workflow tools driven through `LfServer::call` on lf-workflow's
//! memory stores: what each answers, who may read and change what, and
//! bad input refused whole.

use std::sync::Arc;

use lf_battle::{BattleService, MemoryBattleStore};
use lf_core::{LensId, LenserId, PageRequest, Principal, Reach, Scopes, VersionId};
use lf_lens::{LensService, MemoryLensStore};
use lf_tools::{Catalog, CatalogOptions, LfServer, Safety, Services};
use lf_workflow::examples::spec_digest;
use lf_workflow::{
    LensFacts, LensParam, MemoryConnections, MemoryLenses, MemoryWorkflowStore, WorkflowFilter,
    WorkflowService, WorkflowStore,
};
use serde_json::{Value, json};

mod common;
use common::{err, ok};

struct World {
    store: Arc<MemoryWorkflowStore>,
    lenses: Arc<MemoryLenses>,
    connections: Arc<MemoryConnections>,
    services: Arc<Services>,
    alice: LenserId,
    bob: LenserId,
}

impl World {
    fn new() -> Self {
        let store = Arc::new(MemoryWorkflowStore::new());
        let lenses = Arc::new(MemoryLenses::new());
        let connections = Arc::new(MemoryConnections::new());
        let workflow = WorkflowService::new(store.clone(), lenses.clone(), connections.clone());
        let services = Arc::new(
            Services::builder()
                .lens(LensService::new(Arc::new(MemoryLensStore::new())))
                .battle(BattleService::new(Arc::new(MemoryBattleStore::new())))
                .workflow(workflow)
                .connections(lf_workflow::ConnectionService::new(
                    connections.clone(),
                    Arc::new(common::NoSecrets),
                ))
                .build(),
        );
        World { store, lenses, connections, services, alice: LenserId::new(), bob: LenserId::new() }
    }

    fn server_with(&self, principal: Principal, options: CatalogOptions) -> LfServer {
        LfServer::new(Arc::new(Catalog::new()), self.services.clone(), options, principal)
    }

    fn as_(&self, who: LenserId) -> LfServer {
        self.server_with(Principal::Lenser { id: who, scopes: Scopes::READ_WRITE }, CatalogOptions::default())
    }

    /// A lens of `owner` with parameters `(label, optional)`.
    fn lens(&self, owner: LenserId, private: bool, params: &[(&str, bool)]) -> LensId {
        let lens_id = LensId::new();
        let params = params.iter().map(|(l, o)| LensParam { label: (*l).into(), optional: *o }).collect();
        let facts = LensFacts {
            lens_id,
            version_id: VersionId::new(),
            title: "Research".into(),
            params,
            missing_label: None,
        };
        self.lenses.insert(owner, private, facts);
        lens_id
    }

    async fn count(&self) -> u64 {
        let filter = WorkflowFilter { include_archived: true, ..Default::default() };
        self.store.list_workflows(Reach::Everything, &filter, PageRequest::first(100)).await.unwrap().total
    }
}

/// The spec's example at visibility `tier`.
fn digest(lens: LensId, tier: &str) -> Value {
    let mut bp = spec_digest(lens);
    bp["visibility"] = json!(tier);
    bp
}

#[track_caller]
fn s(v: &Value) -> &str {
    match v.as_str() {
        Some(s) => s,
        None => panic!("not a string: {v}"),
    }
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_array().unwrap().iter().map(|k| s(k)).collect()
}

#[tokio::test]
async fn the_spec_example_creates_reads_and_validates() {
    let w = World::new();
    let lens = w.lens(w.alice, true, &[("Topic", false), ("Context", false)]);
    w.connections.insert(w.alice, "slack", "team-slack");
    let a = w.as_(w.alice);

    let c = ok(&a, "create_workflow", digest(lens, "private")).await;
    let id = s(&c["id"]).to_owned();
    assert_eq!((c["node_count"].as_u64(), c["edge_count"].as_u64()), (Some(3), Some(2)));
    assert_eq!(
        (&c["visibility"], &c["head_version"], &c["lenser_id"]),
        (&json!("private"), &json!(1), &json!(w.alice.to_string()))
    );
    let summary = &c["creation_summary"];
    assert_eq!((summary["step_count"].as_u64(), summary["connection_count"].as_u64()), (Some(3), Some(2)));
    let steps: Vec<(&str, &str, &str)> = summary["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|st| (s(&st["key"]), s(&st["kind"]), s(&st["node_type"])))
        .collect();
    assert_eq!(
        steps,
        [
            ("start", "trigger", "schedule_trigger"),
            ("research", "lens", "lens"),
            ("publish", "tool", "slack_notify")
        ]
    );
    assert_eq!(
        keys(&c["next_steps"]),
        [
            "Call validate_workflow with the returned workflow id.",
            "Call run_workflow after validation succeeds."
        ]
    );

    // A lens step outputs text, not the spec's "result": a warning, with where and what to do.
    let warning = &c["warnings"][0];
    assert_eq!((s(&warning["code"]), s(&warning["step"])), ("OUTPUT_KEY_UNKNOWN", "research"), "{warning}");
    assert!(!s(&warning["hint"]).is_empty());

    let got = ok(&a, "get_workflow", json!({"workflow_id": id})).await;
    assert_eq!(got["head"]["number"], 1);
    assert_eq!(got["head"]["id"], got["head_version_id"]);
    assert_eq!(got["versions"].as_array().unwrap().len(), 1);
    // The schedule, its aliases renamed and its defaults applied.
    assert_eq!(got["trigger"]["node_type"], "schedule_trigger");
    assert_eq!(got["trigger"]["config"]["cron"], "0 9 * * 1");
    assert_eq!(got["trigger"]["config"]["timezone"], "Europe/Istanbul");

    let g = ok(&a, "get_workflow_graph", json!({"workflow_id": id})).await;
    assert_eq!(g["connection_refs_redacted"], false);
    let nodes = g["nodes"].as_array().unwrap();
    assert_eq!(nodes[1]["lens_id"], lens.to_string());
    assert_eq!(nodes[1]["parameters"]["topic"], "AI robotics");
    assert_eq!(nodes[2]["connector"]["connection_ref"], "team-slack");
    assert_eq!((nodes[1]["position_x"].as_f64(), nodes[1]["ordinal"].as_u64()), (Some(380.0), Some(1)));
    let edge = &g["edges"][1];
    assert_eq!(
        (s(&edge["from_step"]), s(&edge["output_key"]), s(&edge["to_step"])),
        ("research", "result", "publish")
    );
    assert_eq!(edge["from_node_id"], nodes[1]["id"]);
    assert_eq!(edge["id"], warning["edge"], "the warning names the connection");
    assert_eq!(g["edges"][0]["output_key"], "output", "no output_key carries the whole output");

    let d = ok(&a, "describe_workflow", json!({"workflow_id": id})).await;
    assert_eq!(d["triggers"], json!([{"key": "start", "type": "schedule_trigger"}]));
    assert_eq!(d["nodes"][1]["params"]["topic"], "AI robotics");
    assert_eq!(d["connections"][1]["param"], "content");
    assert!(s(&d["summary"]).starts_with("Workflow \"Weekly AI robotics digest\" has 3 node(s) and 2 connection(s). It starts from schedule_trigger."));

    let v = ok(&a, "validate_workflow", json!({"workflow_id": id})).await;
    assert_eq!((&v["valid"], &v["run_ready"], &v["version"]), (&json!(true), &json!(true), &json!(1)));
    assert_eq!(v["errors"], json!([]));
    assert_eq!(keys(&v["execution_order"]), ["start", "research", "publish"]);
    assert_eq!(keys(&v["root_nodes"]), ["start"]);
    let research = &v["nodes"][1];
    assert_eq!(keys(&research["configured_parameters"]), ["topic"]);
    assert_eq!(keys(&research["wired_parameters"]), ["context"]);
    assert_eq!(research["node_id"], nodes[1]["id"]);
}

#[tokio::test]
async fn an_empty_container_then_versions() {
    let w = World::new();
    let a = w.as_(w.alice);
    let c = ok(&a, "create_workflow", json!({"title": "Later", "description": "Filled in later"})).await;
    let id = s(&c["id"]).to_owned();
    assert_eq!((c["node_count"].as_u64(), c["visibility"].as_str()), (Some(0), Some("private")));
    assert_eq!(c["next_steps"].as_array().unwrap().len(), 1);
    let v1 = ok(&a, "validate_workflow", json!({"workflow_id": id})).await;
    assert_eq!((&v1["valid"], &v1["errors"][0]["code"]), (&json!(false), &json!("WORKFLOW_EMPTY")));
    assert!(!s(&v1["errors"][0]["hint"]).is_empty());

    let steps = json!([
        {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
        {"key": "log", "kind": "tool", "name": "Log", "node_type": "logger", "config": {"message": "got [[input]]"}}
    ]);
    let conns = json!([{"from_step": "start", "to_step": "log", "input_parameter": "input"}]);
    let up =
        ok(&a, "update_workflow", json!({"workflow_id": id, "steps": steps, "connections": conns})).await;
    assert_eq!(
        (&up["version_created"], &up["head"]["number"], &up["workflow"]["head_version"]),
        (&json!(true), &json!(2), &json!(2))
    );
    assert_eq!(up["head"]["changelog"], "Added start, log. 2 steps, 1 connections.");

    let meta = ok(
        &a,
        "update_workflow",
        json!({"workflow_id": id, "title": "Now", "description": "", "visibility": "unlisted"}),
    )
    .await;
    assert_eq!((&meta["version_created"], &meta["head"]["number"]), (&json!(false), &json!(2)));
    assert_eq!(
        (&meta["workflow"]["title"], &meta["workflow"]["description"], &meta["workflow"]["visibility"]),
        (&json!("Now"), &Value::Null, &json!("unlisted"))
    );

    let got = ok(&a, "get_workflow", json!({"workflow_id": id})).await;
    let numbers: Vec<u64> =
        got["versions"].as_array().unwrap().iter().map(|v| v["number"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [2, 1], "newest first");
    assert_eq!(got["trigger"]["node_type"], "manual_trigger");
    let old = ok(&a, "get_workflow_graph", json!({"workflow_id": id, "version": 1})).await;
    assert_eq!((old["version"]["number"].as_u64(), old["nodes"].as_array().unwrap().len()), (Some(1), 0));
    assert_eq!(ok(&a, "validate_workflow", json!({"workflow_id": id, "version": 1})).await["valid"], false);
    assert_eq!(ok(&a, "validate_workflow", json!({"workflow_id": id})).await["valid"], true);
    for tool in ["get_workflow_graph", "validate_workflow"] {
        let e = err(&a, tool, json!({"workflow_id": id, "version": 3})).await;
        assert_eq!(e["code"], "NOT_FOUND", "{tool}");
        let e = err(&a, tool, json!({"workflow_id": id, "version": 0})).await;
        assert_eq!((s(&e["code"]), s(&e["details"]["field"])), ("INVALID_ARGUMENT", "version"), "{tool}");
    }

    let e = err(&a, "update_workflow", json!({"workflow_id": id, "changelog": "Only a note."})).await;
    assert_eq!((s(&e["code"]), s(&e["details"]["field"])), ("INVALID_ARGUMENT", "changelog"));
    let e = err(&a, "update_workflow", json!({"workflow_id": id})).await;
    assert!(s(&e["message"]).starts_with("Nothing to change"), "{e}");
    let e = err(&a, "update_workflow", json!({"workflow_id": id, "steps": []})).await;
    assert_eq!(e["details"]["field"], "steps");
}

#[tokio::test]
async fn others_read_what_is_shared_and_change_nothing() {
    let w = World::new();
    let lens = w.lens(w.alice, false, &[("Topic", false), ("Context", false)]);
    w.connections.insert(w.alice, "slack", "team-slack");
    let (a, b) = (w.as_(w.alice), w.as_(w.bob));
    let mut ids = Vec::new();
    for tier in ["public", "unlisted", "private"] {
        ids.push(s(&ok(&a, "create_workflow", digest(lens, tier)).await["id"]).to_owned());
    }
    let [public, unlisted, private] = [&ids[0], &ids[1], &ids[2]];

    let listed = |v: &Value| -> Vec<String> {
        v["items"].as_array().unwrap().iter().map(|i| s(&i["id"]).to_owned()).collect()
    };
    assert_eq!(ok(&a, "list_workflows", json!({})).await["total"], 3);
    assert_eq!(
        listed(&ok(&b, "list_workflows", json!({})).await),
        [public.as_str()],
        "unlisted is listed to its owner only"
    );
    assert_eq!(
        listed(&ok(&a, "list_workflows", json!({"visibility": "unlisted"})).await),
        [unlisted.as_str()]
    );
    assert_eq!(ok(&b, "list_workflows", json!({"lenser_id": w.bob.to_string()})).await["total"], 0);

    for id in [public, unlisted] {
        ok(&b, "get_workflow", json!({"workflow_id": id})).await;
        ok(&b, "describe_workflow", json!({"workflow_id": id})).await;
        ok(&b, "validate_workflow", json!({"workflow_id": id})).await;
        let g = ok(&b, "get_workflow_graph", json!({"workflow_id": id})).await;
        assert_eq!(g["connection_refs_redacted"], true);
        assert_eq!(g["nodes"][2]["connector"]["connection_ref"], "[redacted]");
        assert_eq!(g["nodes"][1]["parameters"]["topic"], "AI robotics", "lens assignments stay shown");
        assert!(!g.to_string().contains("team-slack"));
        for (tool, args) in [
            ("update_workflow", json!({"workflow_id": id, "title": "Mine"})),
            ("archive_workflow", json!({"workflow_id": id, "confirm": true})),
        ] {
            assert_eq!(err(&b, tool, args).await["code"], "FORBIDDEN", "{tool}");
        }
    }
    for (tool, args) in [
        ("get_workflow", json!({"workflow_id": private})),
        ("get_workflow_graph", json!({"workflow_id": private})),
        ("describe_workflow", json!({"workflow_id": private})),
        ("validate_workflow", json!({"workflow_id": private})),
        ("update_workflow", json!({"workflow_id": private, "title": "Mine"})),
        ("archive_workflow", json!({"workflow_id": private, "confirm": true})),
    ] {
        let e = err(&b, tool, args).await;
        assert_eq!(e["code"], "NOT_FOUND", "{tool}");
        assert!(!e.to_string().contains("digest"), "{tool} shows nothing of it");
    }
    let got = ok(&a, "get_workflow", json!({"workflow_id": private})).await;
    assert_eq!(
        (&got["title"], &got["head_version"]),
        (&json!("Weekly AI robotics digest"), &json!(1)),
        "nothing changed"
    );
}

#[tokio::test]
async fn archiving_hides_from_lists_and_needs_confirm() {
    let w = World::new();
    let a = w.as_(w.alice);
    let id =
        s(&ok(&a, "create_workflow", json!({"title": "Old", "visibility": "public"})).await["id"]).to_owned();
    for confirm in [json!(false), Value::Null] {
        let e = err(&a, "archive_workflow", json!({"workflow_id": id, "confirm": confirm})).await;
        assert_eq!(e["code"], "CONFIRMATION_REQUIRED");
    }
    let e = err(&a, "archive_workflow", json!({"workflow_id": id})).await;
    assert_eq!(e["code"], "CONFIRMATION_REQUIRED");
    let done = ok(&a, "archive_workflow", json!({"workflow_id": id, "confirm": true})).await;
    assert!(done["archived_at"].is_string());
    let again = ok(&a, "archive_workflow", json!({"workflow_id": id, "confirm": true})).await;
    assert_eq!(again["archived_at"], done["archived_at"], "archiving twice keeps the first time");
    assert_eq!(ok(&a, "list_workflows", json!({})).await["total"], 0);
    assert_eq!(ok(&a, "list_workflows", json!({"include_archived": true})).await["total"], 1);
    let got = ok(&a, "get_workflow", json!({"workflow_id": id})).await;
    assert_eq!(got["archived_at"], done["archived_at"], "still readable by id");
}

#[tokio::test]
async fn the_node_catalog() {
    let w = World::new();
    let a = w.as_(w.alice);
    let all = ok(&a, "list_workflow_node_types", json!({})).await;
    let total = all["total"].as_u64().unwrap();
    assert_eq!(total as usize, all["items"].as_array().unwrap().len());
    assert_eq!(total as usize, lf_workflow::catalog::catalog().entries().len());
    let categories = keys(&all["categories"]);
    assert_eq!(categories.len(), 11);
    assert_eq!(categories[..2], ["lens", "trigger"]);
    let triggers = ok(&a, "list_workflow_node_types", json!({"category": "trigger"})).await;
    let names: Vec<&str> = triggers["items"].as_array().unwrap().iter().map(|i| s(&i["type"])).collect();
    assert_eq!(
        names,
        ["manual_trigger", "schedule_trigger", "webhook_trigger", "event_trigger", "form_input_trigger"]
    );
    let none = ok(&a, "list_workflow_node_types", json!({"category": "Triggers"})).await;
    assert_eq!((none["total"].as_u64(), none["categories"].as_array().unwrap().len()), (Some(0), 11));

    let e = ok(&a, "describe_workflow_node_type", json!({"type": "schedule_trigger"})).await;
    for field in [
        "type",
        "display_name",
        "description",
        "category",
        "aliases",
        "capabilities",
        "inputs",
        "outputs",
        "required_config",
        "optional_config",
        "default_config",
        "example_config",
        "accepts_input_types",
        "produces_output_type",
        "supported_funding_modes",
        "supported_execution_environments",
        "retry_behavior",
        "error_behavior",
        "side_effect_policy",
        "example_use_case",
        "docs_link",
    ] {
        assert!(e.get(field).is_some(), "describe_workflow_node_type lacks {field}");
    }
    assert_eq!(e["required_config"][0]["key"], "cron");
    assert!(e["required_config"][0]["aliases"].as_array().unwrap().contains(&json!("cronExpression")));
    assert!(s(&e["docs_link"]).ends_with("docs/workflow-nodes.md#schedule_trigger"));
    let slack = ok(&a, "describe_workflow_node_type", json!({"type": "slack_notify"})).await;
    assert_eq!(slack["connector"]["providers"], json!(["slack"]));
    assert_eq!(slack["side_effect_policy"], "external_write");
    let by_alias = ok(&a, "describe_workflow_node_type", json!({"type": "run_lens"})).await;
    assert_eq!(by_alias["type"], "lens_execute");
    let missing = err(&a, "describe_workflow_node_type", json!({"type": "slack_post"})).await;
    assert_eq!(missing["code"], "NOT_FOUND");
    assert!(s(&missing["message"]).contains("Did you mean slack_notify"), "{missing}");
}

#[tokio::test]
async fn bad_blueprints_are_refused_whole() {
    let w = World::new();
    let visible = w.lens(w.alice, false, &[("Topic", false), ("Context", false)]);
    let hidden = w.lens(w.bob, true, &[("Topic", false)]);
    w.connections.insert(w.alice, "slack", "team-slack");
    let a = w.as_(w.alice);
    let with_step = |i: usize, key: &str, v: Value| {
        let mut bp = digest(visible, "private");
        bp["steps"][i][key] = v;
        bp
    };
    let mut deep = json!({"leaf": 1});
    for _ in 0..64 {
        deep = json!({"inner": deep});
    }
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "a lens the caller cannot read",
            with_step(1, "lens_id", json!(hidden.to_string())),
            "NOT_FOUND",
            "Lens",
        ),
        ("an unknown lens", with_step(1, "lens_id", json!(LensId::new().to_string())), "NOT_FOUND", "Lens"),
        (
            "a secret deep in config",
            with_step(2, "config", json!({"text": "x", "headers": [{"nested": {"Api_Key": "sk-1"}}]})),
            "INVALID_ARGUMENT",
            "forbidden secret field \"Api_Key\"",
        ),
        (
            "an unknown node type",
            with_step(2, "node_type", json!("slack_post")),
            "INVALID_ARGUMENT",
            "Closest: slack_notify",
        ),
        (
            "a key with capitals",
            with_step(2, "key", json!("Publish")),
            "INVALID_ARGUMENT",
            "readable lowercase key",
        ),
        (
            "a key with a space",
            with_step(2, "key", json!("pub lish")),
            "INVALID_ARGUMENT",
            "readable lowercase key",
        ),
        ("config nested 64 deep", with_step(2, "config", deep), "INVALID_ARGUMENT", "nests deeper than"),
        (
            "a connection nobody saved",
            with_step(2, "connector", json!({"provider": "slack", "connection_ref": "nope"})),
            "INVALID_ARGUMENT",
            "nope",
        ),
        ("a wrong type", with_step(2, "config", json!("text")), "INVALID_ARGUMENT", "steps[2].config"),
    ];
    for (what, bp, code, needle) in cases {
        let (failed, e) = common::call(&a, "create_workflow", bp).await;
        assert!(failed, "{what}: created");
        assert_eq!(e["code"], code, "{what}: {e}");
        let said = format!("{} {}", s(&e["message"]), e["details"]["field"].as_str().unwrap_or(""));
        assert!(said.contains(needle), "{what}: {e}");
    }
    // A cycle everything still reaches: refused by the validator, with every error in details.
    let mut cyclic = digest(visible, "private");
    cyclic["connections"]
        .as_array_mut()
        .unwrap()
        .push(json!({"from_step": "publish", "to_step": "research", "input_parameter": "topic"}));
    let e = err(&a, "create_workflow", cyclic).await;
    assert_eq!(e["code"], "INVALID_ARGUMENT");
    let codes: Vec<&str> = e["details"]["errors"].as_array().unwrap().iter().map(|i| s(&i["code"])).collect();
    assert!(codes.contains(&"WORKFLOW_CYCLE"), "{e}");
    let e =
        err(&a, "create_workflow", json!({"title": "Someone else's", "lenser_id": w.bob.to_string()})).await;
    assert_eq!(e["code"], "FORBIDDEN");
    assert_eq!(w.count().await, 0, "nothing was written");

    let nobody = w.server_with(Principal::Service { acting_as: None }, CatalogOptions::default());
    assert_eq!(err(&nobody, "create_workflow", json!({"title": "T"})).await["code"], "MISSING_LENSER");
}

#[tokio::test]
async fn saved_connections_are_listed_to_their_owner_only() {
    let w = World::new();
    w.connections.insert(w.alice, "slack", "team-slack");
    w.connections.insert(w.alice, "smtp", "mail");
    let a = w.as_(w.alice);
    let listed = ok(&a, "list_connections", json!({})).await;
    let refs: Vec<(&str, &str)> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (s(&c["connection_ref"]), s(&c["provider"])))
        .collect();
    assert_eq!(refs, [("mail", "smtp"), ("team-slack", "slack")], "sorted by ref");
    assert_eq!((&listed["total"], &listed["items"][0]["settings"]), (&json!(2), &json!({})));
    assert!(!listed.to_string().contains("secret"), "no secret, not even its name");
    let page = ok(&a, "list_connections", json!({"limit": 1, "offset": 1})).await;
    assert_eq!(
        (&page["items"][0]["connection_ref"], &page["has_more"]),
        (&json!("team-slack"), &json!(false))
    );
    assert_eq!(ok(&w.as_(w.bob), "list_connections", json!({})).await["total"], 0);
    let nobody = w.server_with(Principal::Service { acting_as: None }, CatalogOptions::default());
    assert_eq!(err(&nobody, "list_connections", json!({})).await["code"], "MISSING_LENSER");
}

#[tokio::test]
async fn read_only_lists_the_reads() {
    let w = World::new();
    let ro = w.server_with(
        Principal::Service { acting_as: Some(w.alice) },
        CatalogOptions { read_only: true, ..Default::default() },
    );
    let catalog = Catalog::new();
    let listed: Vec<String> = ro.listing(&[]).iter().map(|t| t.name.to_string()).collect();
    for tool in catalog.tools().iter().filter(|t| t.group.id == "workflow") {
        assert_eq!(listed.contains(&tool.name.to_owned()), tool.safety == Safety::Read, "{}", tool.name);
    }
    let refused = ro.call("create_workflow", common::args(json!({"title": "T"}))).await.unwrap_err();
    assert!(refused.message.contains("not enabled"));
}
