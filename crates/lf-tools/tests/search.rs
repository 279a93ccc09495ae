//! The Search group (`search`, `fetch`) through `LfServer::call`: the shape
//! ChatGPT's connectors expect, what two lensers each find and read, and
//! bad input.

use std::sync::Arc;

use lf_core::{BattleId, LensId, LenserId, Principal, Scopes};
use lf_tools::{Catalog, CatalogOptions, Group, LfServer};
use serde_json::{Value, json};

mod common;
use common::{err, ok, small_workflow};

const BODY: &str = "Explain [[Concept]] in quantum computing to a [[Audience]], with one worked example.";

fn lenser(scopes: Scopes) -> Principal {
    Principal::Lenser { id: LenserId::new(), scopes }
}

/// Alice and Bob on one set of in-memory stores.
fn alice_and_bob() -> (LfServer, LfServer) {
    let services = common::memory_services();
    let alice = LfServer::new(
        Arc::new(Catalog::new()),
        Arc::new(services),
        CatalogOptions::default(),
        lenser(Scopes::READ_WRITE),
    );
    let bob = alice.for_principal(lenser(Scopes::READ_WRITE));
    (alice, bob)
}

/// A lens of `s`'s lenser: its search id.
async fn lens(s: &LfServer, title: &str, visibility: &str) -> String {
    let made =
        ok(s, "create_lens", json!({"title": title, "template_body": BODY, "visibility": visibility})).await;
    format!("lens:{}", made["id"].as_str().unwrap())
}

/// A workflow of `s`'s lenser: its search id.
async fn workflow(s: &LfServer, title: &str, visibility: &str) -> String {
    format!("workflow:{}", small_workflow(s, title, visibility).await)
}

/// A battle of `s`'s lenser, left in draft unless `open`: its search id.
async fn battle(s: &LfServer, title: &str, open: bool) -> String {
    let made = ok(
        s,
        "create_battle",
        json!({"title": title, "task_prompt": "Explain superposition in two sentences."}),
    )
    .await;
    let id = made["id"].as_str().unwrap();
    if open {
        ok(s, "set_battle_status", json!({"battle_id": id, "status": "open"})).await;
    }
    format!("battle:{id}")
}

fn ids(found: &Value) -> Vec<String> {
    found["results"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn search_finds_what_each_lenser_may_read() {
    let (alice, bob) = alice_and_bob();
    let secret = lens(&alice, "Quantum secrets", "private").await;
    let shared = lens(&alice, "Quantum for everyone", "public").await;
    let members = lens(&bob, "Quantum for members", "community").await;
    let _unrelated = ok(
        &alice,
        "create_lens",
        json!({"title": "Gardening", "template_body": "Plan a [[Season]] vegetable garden for a small balcony, step by step."}),
    )
    .await;
    let draft = battle(&alice, "Quantum duel (draft)", false).await;
    let open = battle(&alice, "Quantum duel", true).await;
    let pipeline = workflow(&alice, "Quantum pipeline", "public").await;
    let unlisted = workflow(&alice, "Quantum unlisted pipeline", "unlisted").await;
    let hidden = workflow(&alice, "Quantum hidden pipeline", "private").await;

    let found = ok(&bob, "search", json!({"query": "quantum"})).await;
    let got = ids(&found);
    assert_eq!(got.len(), 4, "{found}");
    for id in [&shared, &members, &pipeline, &open] {
        assert!(got.contains(id), "bob finds {id}: {found}");
    }
    assert_eq!(got[2..], [pipeline.clone(), open.clone()], "lenses first, then workflows, then battles");
    let hit = &found["results"][0];
    let uuid = hit["id"].as_str().unwrap().strip_prefix("lens:").unwrap();
    assert_eq!(hit["url"], format!("lenserfight://lenses/{uuid}"));
    assert!(hit["title"].as_str().unwrap().starts_with("Quantum for"), "{hit}");
    assert_eq!(hit.as_object().unwrap().len(), 3, "id, title and url: {hit}");

    let mine = ids(&ok(&alice, "search", json!({"query": "Quantum"})).await);
    for id in [&secret, &shared, &members, &draft, &open, &pipeline, &unlisted, &hidden] {
        assert!(mine.contains(id), "alice finds {id}: {mine:?}");
    }
    let pipelines = ids(&ok(&bob, "search", json!({"query": "pipeline"})).await);
    assert_eq!(
        pipelines,
        std::slice::from_ref(&pipeline),
        "another's unlisted and private workflows are not found"
    );
    let narrow = ids(&ok(&alice, "search", json!({"query": "quantum duel"})).await);
    assert_eq!(narrow, [open.clone(), draft.clone()], "every word must match; newest battle first");
    assert!(
        ids(&ok(&bob, "search", json!({"query": "secrets"})).await).is_empty(),
        "nothing of alice's private lens"
    );
    assert!(ids(&ok(&bob, "search", json!({"query": "draft"})).await).is_empty(), "nothing of alice's draft");
}

#[tokio::test]
async fn search_gives_ten_of_each_kind_at_most() {
    let (alice, _) = alice_and_bob();
    for i in 0..12 {
        lens(&alice, &format!("Quantum lens {i}"), "public").await;
        workflow(&alice, &format!("Quantum workflow {i}"), "public").await;
        battle(&alice, &format!("Quantum battle {i}"), true).await;
    }
    let found = ids(&ok(&alice, "search", json!({"query": "quantum"})).await);
    assert_eq!(found.iter().filter(|id| id.starts_with("lens:")).count(), 10);
    assert_eq!(found.iter().filter(|id| id.starts_with("workflow:")).count(), 10);
    assert_eq!(found.iter().filter(|id| id.starts_with("battle:")).count(), 10);
}

#[tokio::test]
async fn fetch_reads_a_result_in_full() {
    let (alice, bob) = alice_and_bob();
    let shared = lens(&alice, "Quantum for everyone", "public").await;
    let open = battle(&alice, "Quantum duel", true).await;

    let doc = ok(&bob, "fetch", json!({"id": shared})).await;
    let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["id", "title", "text", "url", "metadata"]);
    assert_eq!(doc["id"], shared.as_str());
    assert_eq!(doc["title"], "Quantum for everyone");
    let text = doc["text"].as_str().unwrap();
    assert!(text.starts_with("# Quantum for everyone\n"), "{text}");
    assert!(text.contains(&format!("```text\n{BODY}\n```")), "{text}");
    assert_eq!(doc["metadata"]["kind"], "lens");
    assert_eq!(doc["metadata"]["visibility"], "public");
    assert_eq!(doc["metadata"]["semver"], "1.0.0");
    assert_eq!(doc["metadata"]["parameters"], json!(["Concept", "Audience"]));

    let by_url = ok(&bob, "fetch", json!({"id": doc["url"]})).await;
    assert_eq!(by_url, doc, "its url fetches the same");

    let duel = ok(&bob, "fetch", json!({"id": open})).await;
    assert_eq!(duel["metadata"]["kind"], "battle");
    assert_eq!(duel["metadata"]["status"], "open");
    assert!(
        duel["text"]
            .as_str()
            .unwrap()
            .contains("## Task\n\n```text\nExplain superposition in two sentences.\n```")
    );
    assert_eq!(duel["url"], format!("lenserfight://battles/{}", open.strip_prefix("battle:").unwrap()));

    let unlisted = workflow(&alice, "Quantum pipeline", "unlisted").await;
    let flow = ok(&bob, "fetch", json!({"id": unlisted})).await;
    assert_eq!(flow["id"], unlisted.as_str(), "an unlisted workflow is read by anyone who has its id");
    assert_eq!(
        flow["url"],
        format!("lenserfight://workflows/{}", unlisted.strip_prefix("workflow:").unwrap())
    );
    let m = &flow["metadata"];
    assert_eq!(
        (&m["kind"], &m["visibility"], &m["version"]),
        (&json!("workflow"), &json!("unlisted"), &json!(1))
    );
    assert_eq!(
        (&m["steps"], &m["connections"], &m["triggers"]),
        (&json!(2), &json!(1), &json!(["manual_trigger"]))
    );
    assert!(flow["text"].as_str().unwrap().contains("2. `log` Log it (tool, noop)"), "{flow}");
}

#[tokio::test]
async fn fetch_of_what_is_not_yours_or_not_there_is_not_found() {
    let (alice, bob) = alice_and_bob();
    let secret = lens(&alice, "Quantum secrets", "private").await;
    let draft = battle(&alice, "Quantum duel (draft)", false).await;
    let hidden = workflow(&alice, "Quantum hidden pipeline", "private").await;
    assert_eq!(ok(&alice, "fetch", json!({"id": secret})).await["metadata"]["visibility"], "private");
    assert_eq!(ok(&alice, "fetch", json!({"id": draft})).await["metadata"]["status"], "draft");
    assert_eq!(ok(&alice, "fetch", json!({"id": hidden})).await["metadata"]["visibility"], "private");
    for id in [
        secret.clone(),
        draft,
        hidden,
        format!("workflow:{}", lf_core::WorkflowId::new()),
        format!("lens:{}", LensId::new()),
        format!("battle:{}", BattleId::new()),
        format!("lenserfight://lenses/{}", LensId::new()),
    ] {
        let e = err(&bob, "fetch", json!({"id": id})).await;
        assert_eq!(e["code"], "NOT_FOUND", "{id}: {e}");
    }
    let nowhere = LensId::new().to_string();
    let message = |e: Value, id: &str| e["message"].as_str().unwrap().replace(id, "<id>");
    let alike =
        message(err(&bob, "fetch", json!({"id": secret})).await, secret.strip_prefix("lens:").unwrap());
    let missing = message(err(&bob, "fetch", json!({"id": format!("lens:{nowhere}")})).await, &nowhere);
    assert_eq!(alike, missing, "not yours and not there read the same");
}

#[tokio::test]
async fn bad_input_names_the_field() {
    let (alice, _) = alice_and_bob();
    for (tool, args, field) in [
        ("search", json!({}), "query"),
        ("search", json!({"query": 5}), "query"),
        ("search", json!({"query": "  ...  "}), "query"),
        ("search", json!({"query": "a b c d e f g h i j k l m n o p q"}), "query"),
        ("search", json!({"query": "x".repeat(501)}), "query"),
        ("search", json!({"query": "quantum", "limit": 5}), "limit"),
        ("fetch", json!({}), "id"),
        ("fetch", json!({"id": ""}), "id"),
        ("fetch", json!({"id": "nope"}), "id"),
        ("fetch", json!({"id": "lens:not-a-uuid"}), "id"),
        ("fetch", json!({"id": format!("spell:{}", LensId::new())}), "id"),
        ("fetch", json!({"id": format!("LENS:{}", LensId::new())}), "id"),
        ("fetch", json!({"id": ["lens:x"]}), "id"),
    ] {
        let e = err(&alice, tool, args.clone()).await;
        assert_eq!(e["code"], "INVALID_ARGUMENT", "{tool} {args}: {e}");
        assert_eq!(e["details"]["field"], field, "{tool} {args}: {e}");
    }
    let e = err(&alice, "fetch", json!({"id": "nope"})).await;
    assert!(e["message"].as_str().unwrap().contains("lens:<uuid>"), "says what an id looks like: {e}");
}

#[tokio::test]
async fn a_read_token_and_the_search_toolset_serve_the_pair() {
    let (alice, _) = alice_and_bob();
    let shared = lens(&alice, "Quantum for everyone", "public").await;
    let reader = alice.for_principal(lenser(Scopes::READ));
    assert_eq!(ids(&ok(&reader, "search", json!({"query": "quantum"})).await), std::slice::from_ref(&shared));
    ok(&reader, "fetch", json!({"id": shared})).await;

    let only = CatalogOptions { toolsets: Some(vec![Group::parse("search").unwrap()]), ..Default::default() };
    let services = Arc::new(common::memory_services());
    let s = LfServer::new(Arc::new(Catalog::new()), services, only, Principal::Service { acting_as: None });
    let names: Vec<String> = s.listing(&[]).iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["search", "fetch"]);
    assert!(s.listing(&[]).iter().all(|t| t.annotations.as_ref().unwrap().read_only_hint == Some(true)));
}
