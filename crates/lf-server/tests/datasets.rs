//! Datasets as the composition root wires them, over SQLite, through the
//! Eval tools: created from inline cases, JSONL and CSV; extended into a
//! new version while the old one stays as it was; paged; archived; read by
//! two lensers and an AI Lenser by the visibility rules; bad input reported
//! by its place with nothing saved.

#[path = "support/calls.rs"]
mod calls;

use std::sync::Arc;

use calls::{err, ok};
use lf_core::{LenserId, Principal, Scopes};
use lf_server::{Background, Database, KeySealer, RunSettings};
use lf_tools::{Catalog, CatalogOptions, Group, LfServer, Services};
use serde_json::{Value, json};

async fn services() -> Arc<Services> {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    let (services, _runner) = lf_server::services(
        &db,
        Arc::new(lf_model::OfflineProvider),
        Background::new(tokio::runtime::Handle::current()),
        KeySealer::new(None),
        &RunSettings::default(),
    );
    services
}

fn server(services: &Arc<Services>, who: LenserId) -> LfServer {
    let options = CatalogOptions { toolsets: Some(Group::parse_set(["all"]).unwrap()), ..Default::default() };
    LfServer::new(
        Arc::new(Catalog::new()),
        services.clone(),
        options,
        Principal::Lenser { id: who, scopes: Scopes::READ_WRITE },
    )
}

/// The places `details.problems` names.
fn places(e: &Value) -> Vec<String> {
    e["details"]["problems"].as_array().map_or_else(Vec::new, |ps| {
        ps.iter().map(|p| p["place"].as_str().unwrap_or_default().to_owned()).collect()
    })
}

/// The ids of every dataset `s` lists.
async fn listed(s: &LfServer) -> Vec<String> {
    let page = ok(s, "list_datasets", json!({"limit": 100, "include_archived": true})).await;
    page["items"].as_array().unwrap().iter().map(|d| d["dataset_id"].as_str().unwrap().to_owned()).collect()
}

fn prompts(page: &Value) -> Vec<String> {
    page["cases"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["case"]["prompt"].as_str().or(c["case"]["inputs"]["topic"].as_str()).unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_eval_tools_are_listed_only_when_asked_for() {
    let services = services().await;
    let plain = LfServer::new(
        Arc::new(Catalog::new()),
        services.clone(),
        CatalogOptions::default(),
        Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE },
    );
    let names: Vec<String> = plain.listing(&[]).iter().map(|t| t.name.to_string()).collect();
    assert!(!names.iter().any(|n| n.contains("dataset")), "not in the default listing");
    assert!(plain.call("list_datasets", Default::default()).await.is_err(), "nor callable");
    let all = server(&services, LenserId::new());
    let names: Vec<String> = all.listing(&[]).iter().map(|t| t.name.to_string()).collect();
    for t in ["create_dataset", "add_dataset_cases", "list_datasets", "get_dataset", "archive_dataset"] {
        assert!(names.contains(&t.to_owned()), "{t}");
    }
}

#[tokio::test]
async fn datasets_are_created_extended_paged_and_archived() {
    let services = services().await;
    let s = server(&services, LenserId::new());

    let inline = ok(
        &s,
        "create_dataset",
        json!({"name": "capitals", "description": "Geography", "cases": [
            {"prompt": "Capital of France?", "expected": "Paris", "tags": ["europe"]},
            {"inputs": {"topic": "Peru"}, "expected": {"capital": "Lima"},
             "assertions": [{"type": "contains", "value": "Lima"}], "metadata": {"source": "atlas"}},
        ]}),
    )
    .await;
    assert_eq!(inline["version"]["version"], 1);
    assert_eq!(inline["dataset"]["case_count"], 2);
    assert_eq!(inline["dataset"]["visibility"], "private", "private unless told");
    let id = inline["dataset"]["dataset_id"].as_str().unwrap().to_owned();
    let read = ok(&s, "get_dataset", json!({"dataset_id": id})).await;
    assert_eq!(read["cases"]["items"][1]["case"]["expected"], json!({"capital": "Lima"}));
    assert_eq!(read["cases"]["items"][1]["case"]["assertions"][0]["type"], "contains");
    assert_eq!(read["cases"]["items"][0]["case"]["tags"], json!(["europe"]));

    let jsonl: String = (1..=30).map(|i| format!("{{\"prompt\": \"q{i}\"}}\n")).collect();
    let from_jsonl = ok(&s, "create_dataset", json!({"name": "thirty", "jsonl": jsonl})).await;
    assert_eq!(from_jsonl["dataset"]["case_count"], 30);
    let csv = "topic,tone,expected,tags\nTides,dry,\"moon, mostly\",sea;physics\nWind,\"\",air,\n";
    let from_csv = ok(&s, "create_dataset", json!({"name": "csv", "csv": csv})).await;
    let csv_id = from_csv["dataset"]["dataset_id"].as_str().unwrap().to_owned();
    let read = ok(&s, "get_dataset", json!({"dataset_id": csv_id})).await;
    assert_eq!(read["cases"]["items"][0]["case"]["inputs"], json!({"topic": "Tides", "tone": "dry"}));
    assert_eq!(read["cases"]["items"][0]["case"]["expected"], "moon, mostly");
    assert_eq!(read["cases"]["items"][0]["case"]["tags"], json!(["sea", "physics"]));
    assert_eq!(read["cases"]["items"][1]["case"]["inputs"], json!({"topic": "Wind"}));

    // Paged with the catalog's conventions.
    let thirty = from_jsonl["dataset"]["dataset_id"].as_str().unwrap().to_owned();
    let page = ok(&s, "get_dataset", json!({"dataset_id": thirty, "limit": 10, "offset": 20})).await;
    assert_eq!(prompts(&page), (21..=30).map(|i| format!("q{i}")).collect::<Vec<_>>());
    assert_eq!(
        (page["cases"]["total"].as_u64(), page["cases"]["has_more"].as_bool()),
        (Some(30), Some(false))
    );
    let first = ok(&s, "get_dataset", json!({"dataset_id": thirty, "limit": 10})).await;
    assert_eq!(first["cases"]["has_more"], true);

    // Adding cases makes version 2; version 1 reads as it did.
    let added = ok(
        &s,
        "add_dataset_cases",
        json!({"dataset_id": id, "jsonl": "{\"prompt\": \"Capital of Japan?\", \"expected\": \"Tokyo\"}\n"}),
    )
    .await;
    assert_eq!(
        (added["version"]["version"].as_u64(), added["dataset"]["case_count"].as_u64()),
        (Some(2), Some(3))
    );
    let latest = ok(&s, "get_dataset", json!({"dataset_id": id})).await;
    assert_eq!(prompts(&latest), ["Capital of France?", "Peru", "Capital of Japan?"]);
    assert_eq!(latest["cases"]["items"][2]["added_in"], 2);
    let old = ok(&s, "get_dataset", json!({"dataset_id": id, "version": 1})).await;
    assert_eq!(prompts(&old), ["Capital of France?", "Peru"]);
    assert_eq!((old["version"]["case_count"].as_u64(), old["cases"]["total"].as_u64()), (Some(2), Some(2)));
    let none = err(&s, "get_dataset", json!({"dataset_id": id, "version": 3})).await;
    assert_eq!(
        (none["code"].as_str(), none["details"]["field"].as_str()),
        (Some("NOT_FOUND"), Some("version"))
    );

    // Archived: confirmed first, then no longer listed nor extended, still read.
    let unconfirmed = err(&s, "archive_dataset", json!({"dataset_id": id})).await;
    assert_eq!(unconfirmed["code"], "CONFIRMATION_REQUIRED");
    ok(&s, "archive_dataset", json!({"dataset_id": id, "confirm": true})).await;
    let live = ok(&s, "list_datasets", json!({})).await;
    assert!(!live["items"].as_array().unwrap().iter().any(|d| d["dataset_id"] == id.as_str()));
    assert!(listed(&s).await.contains(&id), "listed when asked");
    let late = err(&s, "add_dataset_cases", json!({"dataset_id": id, "cases": [{"prompt": "late"}]})).await;
    assert_eq!(late["code"], "CONFLICT");
    assert_eq!(prompts(&ok(&s, "get_dataset", json!({"dataset_id": id, "version": 1})).await).len(), 2);
}

#[tokio::test]
async fn bad_cases_are_reported_by_place_and_nothing_is_saved() {
    let services = services().await;
    let s = server(&services, LenserId::new());

    let mut jsonl: String = (1..=10).map(|i| format!("{{\"prompt\": \"q{i}\"}}\n")).collect();
    jsonl = jsonl.replace("{\"prompt\": \"q7\"}", "{\"prompt\": \"q7\"");
    let e = err(&s, "create_dataset", json!({"name": "broken", "jsonl": jsonl})).await;
    assert_eq!(
        (e["code"].as_str(), e["details"]["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("jsonl"))
    );
    assert_eq!(places(&e), ["line 7"]);
    assert!(e["message"].as_str().unwrap().contains("line 7: not JSON"), "{e}");

    let many: Vec<Value> = (0..10_001).map(|i| json!({"prompt": format!("q{i}")})).collect();
    let e = err(&s, "create_dataset", json!({"name": "huge", "cases": many})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENT");
    assert!(e["message"].as_str().unwrap().contains("10001 cases"), "{e}");
    let jsonl: String = (0..10_001).map(|i| format!("{{\"prompt\": \"q{i}\"}}\n")).collect();
    let e = err(&s, "create_dataset", json!({"name": "huge", "jsonl": jsonl})).await;
    assert_eq!(e["details"]["place"], "line 10001");

    let e = err(
        &s,
        "create_dataset",
        json!({"name": "empty", "cases": [{"prompt": "fine"}, {"expected": "no question"}, {"prompt": "x", "assertions": [{"value": 1}]}]}),
    )
    .await;
    assert_eq!(places(&e), ["cases[1]", "cases[2]"]);
    assert_eq!(e["details"]["bad_cases"], 2);
    assert!(e["details"]["problems"][0]["problem"].as_str().unwrap().contains("inputs"), "{e}");

    let e =
        err(&s, "create_dataset", json!({"name": "two", "csv": "prompt\nhi\n", "cases": [{"prompt": "x"}]}))
            .await;
    assert_eq!(e["details"]["field"], "cases", "exactly one source");

    assert!(listed(&s).await.is_empty(), "nothing was saved");

    let good = ok(&s, "create_dataset", json!({"name": "kept", "cases": [{"prompt": "one"}]})).await;
    let id = good["dataset"]["dataset_id"].as_str().unwrap().to_owned();
    let e = err(
        &s,
        "add_dataset_cases",
        json!({"dataset_id": id, "jsonl": "{\"prompt\": \"ok\"}\n{\"inputs\": 3}\n"}),
    )
    .await;
    assert_eq!(places(&e), ["line 2"]);
    let read = ok(&s, "get_dataset", json!({"dataset_id": id})).await;
    assert_eq!(
        (read["dataset"]["latest_version"].as_u64(), read["cases"]["total"].as_u64()),
        (Some(1), Some(1))
    );
    let taken = err(&s, "create_dataset", json!({"name": "kept", "cases": [{"prompt": "again"}]})).await;
    assert_eq!(taken["code"], "CONFLICT");
}

#[tokio::test]
async fn two_lensers_and_an_agent_read_by_visibility() {
    let services = services().await;
    let (alice_id, bob_id) = (LenserId::new(), LenserId::new());
    let (alice, bob) = (server(&services, alice_id), server(&services, bob_id));
    let create = |name: &str, visibility: &str| json!({"name": name, "visibility": visibility, "cases": [{"prompt": format!("{name}?")}]});
    let private = ok(&alice, "create_dataset", create("secret", "private")).await;
    let private = private["dataset"]["dataset_id"].as_str().unwrap().to_owned();
    let shared = ok(&alice, "create_dataset", create("shared", "community")).await;
    let shared = shared["dataset"]["dataset_id"].as_str().unwrap().to_owned();

    // Bob: the private one does not exist for him, alike with a made-up id.
    let missing = LenserId::new().to_string();
    let hidden = err(&bob, "get_dataset", json!({"dataset_id": private})).await;
    let absent = err(&bob, "get_dataset", json!({"dataset_id": missing})).await;
    assert_eq!(hidden["code"], "NOT_FOUND");
    assert_eq!(
        hidden["message"].as_str().unwrap().replace(&private, "ID"),
        absent["message"].as_str().unwrap().replace(&missing, "ID"),
        "NOT_FOUND alike whether it exists"
    );
    for (tool, args) in [
        ("add_dataset_cases", json!({"dataset_id": private, "cases": [{"prompt": "x"}]})),
        ("archive_dataset", json!({"dataset_id": private, "confirm": true})),
    ] {
        assert_eq!(err(&bob, tool, args).await["code"], "NOT_FOUND", "{tool}");
    }
    assert_eq!(listed(&bob).await, [shared.as_str()]);
    ok(&bob, "get_dataset", json!({"dataset_id": shared})).await;
    let e = err(&bob, "add_dataset_cases", json!({"dataset_id": shared, "cases": [{"prompt": "x"}]})).await;
    assert_eq!(e["code"], "FORBIDDEN", "he reads it, but it is not his to change");

    // Alice's AI Lenser reads and writes as its owner, through its grants,
    // every call in its action log.
    let created =
        ok(&alice, "create_ai_lenser", json!({"handle": "ada_curates", "display_name": "Ada"})).await;
    let agent = created["ai_lenser_id"].as_str().unwrap().to_owned();
    for tool in ["get_dataset", "add_dataset_cases"] {
        ok(&alice, "assign_agent_tool", json!({"ai_lenser_id": agent, "tool_id": tool})).await;
    }
    let act = |action: &str, metadata: Value| json!({"ai_lenser_id": agent, "action_type": action, "metadata": metadata});
    let read = ok(&alice, "run_agent_action", act("get_dataset", json!({"dataset_id": private}))).await;
    assert_eq!(read["result"]["cases"]["items"][0]["case"]["prompt"], "secret?");
    let added = ok(
        &alice,
        "run_agent_action",
        act("add_dataset_cases", json!({"dataset_id": private, "cases": [{"prompt": "more"}]})),
    )
    .await;
    let version = &added["result"]["version"];
    assert_eq!(
        (version["version"].as_u64(), version["created_by"].as_str()),
        (Some(2), Some(agent.as_str()))
    );
    let denied = err(&alice, "run_agent_action", act("list_datasets", json!({}))).await;
    assert_eq!(denied["code"], "PERMISSION_DENIED", "not granted");
    let log = ok(&alice, "list_agent_actions", json!({"ai_lenser_id": agent})).await;
    let actions: Vec<&str> =
        log["items"].as_array().unwrap().iter().map(|a| a["action"].as_str().unwrap()).collect();
    assert!(actions.contains(&"add_dataset_cases") && actions.contains(&"get_dataset"), "{log}");

    // Bob's AI Lenser reaches what Bob reaches: not Alice's private dataset.
    let bobs = ok(&bob, "create_ai_lenser", json!({"handle": "bob_reads", "display_name": "Bo"})).await;
    let bobs = bobs["ai_lenser_id"].as_str().unwrap().to_owned();
    ok(&bob, "assign_agent_tool", json!({"ai_lenser_id": bobs, "tool_id": "get_dataset"})).await;
    let act =
        json!({"ai_lenser_id": bobs, "action_type": "get_dataset", "metadata": {"dataset_id": private}});
    assert_eq!(err(&bob, "run_agent_action", act).await["code"], "NOT_FOUND");
}
