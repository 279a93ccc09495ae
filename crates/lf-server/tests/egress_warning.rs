//! validate_workflow warns of a step URL the egress guard will refuse, with
//! the guard's own policy under the operator's allow-list, as the
//! composition root wires it: loopback URLs do not validate as run-ready
//! and then fail only at run time without a word.

use std::sync::Arc;

use lf_core::{LenserId, Principal, Scopes};
use lf_server::{Background, Database, KeySealer, RunSettings};
use lf_workflow::validate::Issue;
use lf_workflow::{IssueCode, NewWorkflow, RawBlueprint, VersionSelector};
use serde_json::json;

/// The EGRESS_REFUSED warnings of a workflow whose steps fetch `urls`,
/// validated on a server whose allow-list is `allow`.
async fn refused(allow: &str, urls: &[&str]) -> Vec<Issue> {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    let runs =
        RunSettings { egress_allow: lf_egress::Allow::parse(allow).unwrap(), ..RunSettings::default() };
    let (services, _runner) = lf_server::services(
        &db,
        Arc::new(lf_model::OfflineProvider),
        Background::new(tokio::runtime::Handle::current()),
        KeySealer::new(None),
        &runs,
    );
    let me = Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE };
    let mut steps =
        vec![json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"})];
    let mut connections = Vec::new();
    for (i, url) in urls.iter().enumerate() {
        let key = format!("fetch{i}");
        steps.push(json!({"key": key, "kind": "tool", "name": key, "node_type": "http_request", "config": {"url": url}}));
        connections.push(json!({"from_step": "start", "to_step": key, "input_parameter": "input"}));
    }
    let blueprint: RawBlueprint =
        serde_json::from_value(json!({"title": "Fetch", "steps": steps, "connections": connections}))
            .unwrap();
    let created = services.workflow.create(&me, NewWorkflow { blueprint, owner: None }).await.unwrap();
    let checked = services.workflow.validate(&me, created.workflow.id, VersionSelector::Head).await.unwrap();
    assert!(checked.report.valid, "{:?}", checked.report.errors);
    checked.report.warnings.into_iter().filter(|i| i.code == IssueCode::EgressRefused).collect()
}

#[tokio::test]
async fn a_loopback_url_is_warned_about_naming_the_allow_list() {
    let urls = [
        "http://localhost:8080/items",
        "http://127.0.0.1:9/x",
        "http://[::1]/x",
        "http://api.localhost/x",
        "http://169.254.169.254/latest/meta-data",
        "http://localhost/[[path]]",
        "https://example.com/items",
    ];
    let warned = refused("", &urls).await;
    let nodes: Vec<usize> = warned.iter().map(|i| i.node.unwrap()).collect();
    assert_eq!(nodes, [1, 2, 3, 4, 5], "the templated and the public URL are not judged: {warned:#?}");
    assert!(
        warned[0].message.contains("http://localhost:8080/items") && warned[0].message.contains("(loopback)")
    );
    assert!(warned[0].hint.contains("LENSERFIGHT_EGRESS_ALLOW=localhost"), "{}", warned[0].hint);
    assert!(warned[1].hint.contains("LENSERFIGHT_EGRESS_ALLOW=127.0.0.1"), "{}", warned[1].hint);
    assert!(warned[2].hint.contains("LENSERFIGHT_EGRESS_ALLOW=::1"), "{}", warned[2].hint);
    assert!(warned[4].message.contains("(cloud metadata)") && warned[4].hint.starts_with("Nothing opens"));
}

#[tokio::test]
async fn a_host_the_allow_list_opens_is_not_warned_about() {
    let warned = refused(
        "localhost, 127.0.0.1",
        &["http://localhost:8080/items", "http://127.0.0.1/x", "http://10.0.0.1/x"],
    )
    .await;
    let nodes: Vec<usize> = warned.iter().map(|i| i.node.unwrap()).collect();
    assert_eq!(nodes, [3], "{warned:#?}");
    assert!(warned[0].message.contains("private (RFC 1918)"), "{}", warned[0].message);
}
