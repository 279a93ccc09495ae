//! An experiment's results as MCP resources (`results.jsonl`, `results.csv`,
//! and with a battle's, `chart.svg` and `chart.png`)
//! through rmcp's service, as a client reads them: listed as templates,
//! read by whoever reads the experiment, not found for anyone else, and
//! exactly the cells the store holds, with CSV's quoting.

use std::sync::Arc;

use base64::Engine as _;
use lf_core::{LenserId, Principal, Scopes, Timestamp};
use lf_eval::experiment::{AssertionOutcome, CellKey, CellResult, ExperimentId};
use lf_tools::{Catalog, CatalogOptions, Group, LfServer};
use serde_json::{Value, json};

mod common;
use common::wire::Wire;
use common::{err, ok};

/// Alice and Bob with the eval toolset on one set of in-memory stores
/// (no runner: cells wait until the test writes them).
fn alice_and_bob() -> (LfServer, LfServer) {
    let options = CatalogOptions { toolsets: Some(Group::parse_set(["all"]).unwrap()), ..Default::default() };
    let lenser = || Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE };
    let alice =
        LfServer::new(Arc::new(Catalog::new()), Arc::new(common::memory_services()), options, lenser());
    let bob = alice.for_principal(lenser());
    (alice, bob)
}

/// An experiment of `s`'s over two cases and contenders `m-a` and `m-b`.
async fn experiment(s: &LfServer, visibility: &str) -> ExperimentId {
    let data = ok(
        s,
        "create_dataset",
        json!({"name": format!("tiny {visibility}"), "visibility": visibility,
               "cases": [{"prompt": "Q1", "tags": ["a"]}, {"prompt": "Q2", "tags": ["a", "b c"]}]}),
    )
    .await;
    let started = ok(
        s,
        "run_experiment",
        json!({"dataset_id": data["dataset"]["dataset_id"], "contenders": ["m-a", "m-b"],
               "visibility": visibility, "assertions": [{"type": "contains", "value": "x"}]}),
    )
    .await;
    ExperimentId::parse("id", started["experiment_id"].as_str().unwrap()).unwrap()
}

/// Writes the cell `(position, contender)` of `id` as a claim's holder would.
async fn write(
    s: &LfServer,
    id: ExperimentId,
    position: u32,
    contender: u16,
    answer: Option<&str>,
    tags: &[&str],
) {
    let store = s.services().experiments.store();
    let key = CellKey { experiment: id, position, contender, repeat: 1 };
    let at = |s: i64| Timestamp::from_micros(s * 1_000_000);
    store.claim_cell(key, "test", at(1), at(100), 3).await.unwrap();
    let passed = answer.is_some_and(|a| a.contains('x'));
    let result = CellResult {
        key,
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        answer: answer.map(str::to_owned),
        outcomes: answer
            .map(|_| AssertionOutcome {
                kind: "contains".into(),
                from: "assertions[0]".into(),
                passed,
                reason: if passed { "found \"x\"".into() } else { "no \"x\"".into() },
                judged: None,
            })
            .into_iter()
            .collect(),
        passed,
        score: if passed { 1.0 } else { 0.0 },
        error: answer.is_none().then(|| "HTTP 500, twice".to_owned()),
        input_tokens: 10,
        output_tokens: if answer.is_some() { 5 } else { 0 },
        cost_usd: 0.25,
        credits: 1,
        latency_ms: 120,
        attempts: if answer.is_some() { 1 } else { 2 },
        created_at: at(2),
        matchups: Vec::new(),
    };
    assert!(store.save_result(&result, "test", at(3)).await.unwrap());
}

fn uris(id: ExperimentId) -> [String; 2] {
    [
        format!("lenserfight://experiments/{id}/results.jsonl"),
        format!("lenserfight://experiments/{id}/results.csv"),
    ]
}

async fn read(w: &mut Wire, uri: &str) -> (String, String) {
    let read = w.result("resources/read", json!({"uri": uri})).await;
    let c = &read["contents"][0];
    assert_eq!(c["uri"], uri);
    (c["mimeType"].as_str().unwrap().to_owned(), c["text"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn the_templates_name_both_exports() {
    let (alice, _) = alice_and_bob();
    let mut w = Wire::open(alice, "2025-11-25").await;
    let t = w.result("resources/templates/list", json!({})).await;
    let exports: Vec<(&str, &str)> = t["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["uriTemplate"].as_str().unwrap().contains("/results."))
        .map(|t| (t["uriTemplate"].as_str().unwrap(), t["mimeType"].as_str().unwrap()))
        .collect();
    assert_eq!(
        exports,
        [
            ("lenserfight://experiments/{experiment_id}/results.jsonl", "application/jsonl"),
            ("lenserfight://experiments/{experiment_id}/results.csv", "text/csv"),
        ]
    );
}

#[tokio::test]
async fn a_small_experiment_exports_exactly_its_cells() {
    let (alice, _) = alice_and_bob();
    let id = experiment(&alice, "private").await;
    // Written out of order; the export goes by case, contender, repeat.
    write(&alice, id, 2, 0, None, &["a", "b c"]).await;
    write(&alice, id, 1, 1, Some("no"), &["a"]).await;
    write(&alice, id, 1, 0, Some("x, said \"she\"\nthen left"), &["a"]).await;

    let mut w = Wire::open(alice, "2026-07-28").await;
    let [jsonl, csv] = uris(id);
    let (mime, text) = read(&mut w, &jsonl).await;
    assert_eq!(mime, "application/jsonl");
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(text.ends_with('\n') && lines.len() == 3, "{text}");
    assert_eq!(
        lines[0],
        json!({"position": 1, "contender": 0, "model": "m-a", "repeat": 1, "tags": ["a"],
               "answer": "x, said \"she\"\nthen left", "passed": true, "score": 1.0, "error": null,
               "assertions": [{"type": "contains", "from": "assertions[0]", "passed": true, "reason": "found \"x\""}],
               "tokens": [10, 5], "cost_usd": 0.25, "latency_ms": 120, "attempts": 1})
    );
    let keys: Vec<&str> = lines[0].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys[..4],
        ["position", "contender", "model", "repeat"],
        "the contender's name follows its index"
    );
    assert_eq!((lines[1]["model"].as_str(), lines[1]["passed"].as_bool()), (Some("m-b"), Some(false)));
    assert_eq!(
        (lines[2]["position"].as_u64(), lines[2]["answer"].clone(), lines[2]["error"].as_str()),
        (Some(2), Value::Null, Some("HTTP 500, twice"))
    );

    let (mime, text) = read(&mut w, &csv).await;
    assert_eq!(mime, "text/csv");
    assert_eq!(
        text,
        "position,contender,model,repeat,tags,passed,score,answer,error,assertions,input_tokens,output_tokens,cost_usd,latency_ms,attempts\r\n\
         1,0,m-a,1,a,true,1,\"x, said \"\"she\"\"\nthen left\",,\"[{\"\"type\"\":\"\"contains\"\",\"\"from\"\":\"\"assertions[0]\"\",\"\"passed\"\":true,\"\"reason\"\":\"\"found \\\"\"x\\\"\"\"\"}]\",10,5,0.25,120,1\r\n\
         1,1,m-b,1,a,false,0,no,,\"[{\"\"type\"\":\"\"contains\"\",\"\"from\"\":\"\"assertions[0]\"\",\"\"passed\"\":false,\"\"reason\"\":\"\"no \\\"\"x\\\"\"\"\"}]\",10,5,0.25,120,1\r\n\
         2,0,m-a,1,a;b c,false,0,,\"HTTP 500, twice\",[],10,0,0.25,120,2\r\n"
    );
}

#[tokio::test]
async fn a_larger_experiment_exports_each_written_cell_once_in_order() {
    let (alice, _) = alice_and_bob();
    // 260 cases of two contenders: windows of 1, 250 and 9 cases.
    let cases: Vec<Value> = (1..=260).map(|i| json!({"prompt": format!("Q{i}")})).collect();
    let data = ok(&alice, "create_dataset", json!({"name": "many", "cases": cases})).await;
    let started = ok(
        &alice,
        "run_experiment",
        json!({"dataset_id": data["dataset"]["dataset_id"], "contenders": ["m-a", "m-b"]}),
    )
    .await;
    let id = ExperimentId::parse("id", started["experiment_id"].as_str().unwrap()).unwrap();
    let mut written = Vec::new();
    for position in (1..=260).rev() {
        for contender in [1, 0] {
            if contender == 0 || position % 3 == 0 {
                write(&alice, id, position, contender, Some("x"), &[]).await;
                written.push((position as u64, contender as u64));
            }
        }
    }
    written.sort_unstable();
    let mut w = Wire::open(alice, "2026-07-28").await;
    let (_, text) = read(&mut w, &uris(id)[0]).await;
    let got: Vec<(u64, u64)> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| (v["position"].as_u64().unwrap(), v["contender"].as_u64().unwrap()))
        .collect();
    assert_eq!(got.len(), 346);
    assert_eq!(got, written);
}

#[tokio::test]
async fn only_who_reads_the_experiment_reads_its_export() {
    let (alice, bob) = alice_and_bob();
    let private = experiment(&alice, "private").await;
    let public = experiment(&alice, "public").await;
    for id in [private, public] {
        write(&alice, id, 1, 0, Some("x"), &["a"]).await;
    }
    let missing = ExperimentId::new();
    let got = err(&bob, "get_experiment", json!({"experiment_id": private.to_string()})).await;
    assert_eq!(got["code"], "NOT_FOUND", "the tools agree");

    for version in ["2025-11-25", "2026-07-28"] {
        let mut a = Wire::open(alice.clone(), version).await;
        let mut b = Wire::open(bob.clone(), version).await;
        let not_found = if version == "2025-11-25" { -32002 } else { -32602 };
        for uri in uris(private) {
            let (_, text) = read(&mut a, &uri).await;
            assert!(text.contains("m-a"), "alice reads her own: {text}");
            let reply = b.request("resources/read", json!({"uri": uri})).await;
            assert_eq!(reply["error"]["code"], not_found, "bob reads none of alice's private: {reply}");
            assert_eq!(reply["error"]["data"]["uri"], uri.as_str());
        }
        for uri in uris(missing) {
            let reply = b.request("resources/read", json!({"uri": uri})).await;
            assert_eq!(reply["error"]["code"], not_found, "a missing one alike: {reply}");
        }
        for uri in uris(public) {
            assert_eq!(read(&mut a, &uri).await, read(&mut b, &uri).await, "a public one reads alike");
        }
    }
}

#[tokio::test]
async fn charts_draw_what_their_reader_may_read() {
    let (alice, bob) = alice_and_bob();
    let private = experiment(&alice, "private").await;
    write(&alice, private, 1, 0, Some("x"), &["a"]).await;
    write(&alice, private, 2, 0, Some("no"), &["a"]).await;
    let made =
        ok(&alice, "create_battle", json!({"title": "Rivers <b>", "task_prompt": "Name three rivers."}))
            .await;
    let battle = made["id"].as_str().unwrap();
    ok(
        &alice,
        "add_battle_contender",
        json!({"battle_id": battle, "display_name": "<script>alert(1)</script>", "contender_type": "ai_model",
               "contender_ref_id": lf_core::LensId::new().to_string()}),
    )
    .await;
    let experiment_chart = format!("lenserfight://experiments/{private}/chart.svg");
    let battle_chart = format!("lenserfight://battles/{battle}/chart.svg");

    let mut a = Wire::open(alice, "2025-11-25").await;
    let (mime, svg) = read(&mut a, &experiment_chart).await;
    assert_eq!(mime, "image/svg+xml");
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{svg}");
    assert!(svg.contains(">m-a</text>") && svg.contains(">m-b</text>"), "{svg}");
    assert!(svg.contains(">50% of 2 (score 0.50)</text>"), "one of m-a's two cells passed: {svg}");
    assert!(
        svg.contains(&format!("Experiment {}: running, 2 of 4 cells", &private.to_string()[..8])),
        "{svg}"
    );
    let (_, svg) = read(&mut a, &battle_chart).await;
    assert!(svg.contains("A: &lt;script&gt;alert(1)&lt;/script&gt;") && !svg.contains("<script"), "{svg}");
    assert!(svg.contains("<title>Rivers &lt;b&gt;</title>") && svg.contains(">0 votes</text>"), "{svg}");

    // The same charts as PNG: a blob of base64, the image's 640 pixels wide.
    for uri in [&experiment_chart, &battle_chart].map(|u| u.replace(".svg", ".png")) {
        let read = a.result("resources/read", json!({"uri": uri})).await;
        let c = &read["contents"][0];
        assert_eq!(
            (&c["uri"], &c["mimeType"], c.get("text")),
            (&json!(uri), &json!("image/png"), None),
            "{c}"
        );
        let png = base64::engine::general_purpose::STANDARD.decode(c["blob"].as_str().unwrap()).unwrap();
        assert_eq!(&png[..16], b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", "the signature, then IHDR");
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 640);
    }

    let mut b = Wire::open(bob, "2025-11-25").await;
    for uri in
        [&experiment_chart, &battle_chart].into_iter().flat_map(|u| [u.replace(".svg", ".png"), u.clone()])
    {
        let reply = b.request("resources/read", json!({"uri": uri})).await;
        assert_eq!(reply["error"]["code"], -32002, "alice's private experiment and draft battle: {reply}");
    }
}
