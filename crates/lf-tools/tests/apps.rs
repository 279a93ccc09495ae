//! MCP Apps through rmcp's service: a client declaring the
//! `io.modelcontextprotocol/ui` extension finds get_leaderboard,
//! get_battle and get_experiment naming their `ui://` views, in both eras,
//! and reads each view as self-contained HTML; a client declaring nothing
//! gets the listing byte for byte as before, and every client the same
//! tool results.

use std::sync::Arc;

use lf_core::{LenserId, Principal, Scopes};
use lf_tools::{Catalog, CatalogOptions, Group, LfServer};
use serde_json::{Value, json};

#[allow(dead_code, reason = "these tests read no tool's error")]
mod common;
use common::ok;
use common::wire::Wire;

const VIEWS: [(&str, &str); 3] = [
    ("get_leaderboard", "ui://lenserfight/leaderboard.html"),
    ("get_battle", "ui://lenserfight/battle.html"),
    ("get_experiment", "ui://lenserfight/experiment.html"),
];

fn server(toolsets: Option<&str>) -> LfServer {
    let options =
        CatalogOptions { toolsets: toolsets.map(|t| Group::parse_set([t]).unwrap()), ..Default::default() };
    let p = Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE };
    LfServer::new(Arc::new(Catalog::new()), Arc::new(common::memory_services()), options, p)
}

fn apps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

fn tools(list: &Value) -> &Vec<Value> {
    list["tools"].as_array().unwrap()
}

#[tokio::test]
async fn only_a_host_of_apps_finds_the_views() {
    for toolsets in [None, Some("all")] {
        let s = server(toolsets);
        for version in ["2025-11-25", "2026-07-28"] {
            let mut plain = Wire::open(s.clone(), version).await;
            let mut other =
                Wire::declaring(s.clone(), version, json!({"extensions": {"x.example/other": {}}})).await;
            let mut host = Wire::declaring(s.clone(), version, apps()).await;
            let before = plain.result("tools/list", json!({})).await;
            assert!(tools(&before).iter().all(|t| t.get("_meta").is_none()), "{toolsets:?} {version}");
            let expected: Vec<Value> =
                s.listing(&[]).iter().map(|t| serde_json::to_value(t).unwrap()).collect();
            assert_eq!(tools(&before), &expected, "the listing as it was");
            assert_eq!(
                other.result("tools/list", json!({})).await,
                before,
                "another extension changes nothing"
            );

            let listed = host.result("tools/list", json!({})).await;
            assert_eq!(tools(&listed).len(), tools(&before).len());
            for (with, without) in tools(&listed).iter().zip(tools(&before)) {
                let name = with["name"].as_str().unwrap();
                match VIEWS.iter().find(|(tool, _)| *tool == name) {
                    Some((_, uri)) => {
                        assert_eq!(with["_meta"], json!({"ui": {"resourceUri": uri}}), "{name}");
                        let mut bare = with.clone();
                        bare.as_object_mut().unwrap().remove("_meta");
                        assert_eq!(&bare, without, "{name}: only _meta added");
                    }
                    None => assert_eq!(with, without, "{name}"),
                }
            }
            let named: Vec<&str> = tools(&listed)
                .iter()
                .filter(|t| t.get("_meta").is_some())
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            let want: &[&str] = if toolsets.is_some() {
                &["get_battle", "get_leaderboard", "get_experiment"]
            } else {
                &["get_battle", "get_leaderboard"]
            };
            let mut sorted = named.clone();
            sorted.sort_unstable();
            let mut want = want.to_vec();
            want.sort_unstable();
            assert_eq!(sorted, want, "{toolsets:?} {version}: eval is opt-in");
        }
    }
}

#[tokio::test]
async fn each_view_reads_as_self_contained_html() {
    let s = server(None);
    for version in ["2025-11-25", "2026-07-28"] {
        for caps in [apps(), json!({})] {
            let mut w = Wire::declaring(s.clone(), version, caps).await;
            for (_, uri) in VIEWS {
                let read = w.result("resources/read", json!({"uri": uri})).await;
                let c = &read["contents"][0];
                assert_eq!(
                    (c["uri"].as_str(), c["mimeType"].as_str()),
                    (Some(uri), Some("text/html;profile=mcp-app"))
                );
                assert_eq!(c["_meta"], json!({"ui": {"csp": {}, "prefersBorder": true}}));
                let html = c["text"].as_str().unwrap();
                assert!(html.starts_with("<!doctype html>"), "{html}");
                assert!(
                    html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-"),
                    "{html}"
                );
                assert!(html.contains("ui/notifications/tool-result") && html.contains("structuredContent"));
                assert!(!html.contains(" src=") && !html.contains(" href=") && !html.contains("innerHTML"));
            }
        }
    }
}

#[tokio::test]
async fn results_are_the_same_for_every_client() {
    let s = server(None);
    let made =
        ok(&s, "create_battle", json!({"title": "Rivers", "task_prompt": "<script>alert(1)</script>"})).await;
    let args = json!({"name": "get_battle", "arguments": {"battle_id": made["id"]}});
    let mut plain = Wire::open(s.clone(), "2025-11-25").await;
    let mut host = Wire::declaring(s.clone(), "2025-11-25", apps()).await;
    let a = plain.result("tools/call", args.clone()).await;
    let b = host.result("tools/call", args).await;
    assert_eq!(a, b);
    assert_eq!(
        a["structuredContent"]["task_prompt"], "<script>alert(1)</script>",
        "data, drawn as text by the view"
    );
}
