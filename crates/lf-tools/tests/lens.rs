//! The Lens tools that read or write a template answer, in `warnings`, each
//! `[[` left unclosed: the grammar keeps it as text, so the parameter the
//! author meant silently does not exist.

use std::sync::Arc;

use lf_core::{LenserId, Principal, Scopes};
use lf_tools::{Catalog, CatalogOptions, LfServer};
use serde_json::{Value, json};

mod common;
use common::{err, ok};

const FORGOTTEN: &str = "Please review this [[Language code carefully and list every bug in [[Code]].";
const CLOSED: &str = "Please review this [[Language]] code carefully and list every bug in [[Code]].";

fn server() -> LfServer {
    LfServer::new(
        Arc::new(Catalog::new()),
        Arc::new(common::memory_services()),
        CatalogOptions::default(),
        Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE },
    )
}

/// The one warning of [`FORGOTTEN`], as every tool answers it.
fn the_warning() -> Value {
    json!([{
        "code": "UNTERMINATED_TOKEN",
        "message": "[[Language at line 1, column 20 is not closed, so it is text and not a parameter: close it as [[Language]] to make a parameter, or write \\[[ for a literal [[.",
        "offset": 19,
        "line": 1,
        "column": 20,
        "token": "[[Language",
    }])
}

#[tokio::test]
async fn every_tool_that_reads_or_writes_a_template_names_an_unclosed_token() {
    let s = server();
    let created = ok(&s, "create_lens", json!({"title": "Reviewer", "template_body": FORGOTTEN})).await;
    assert_eq!(created["warnings"], the_warning(), "{created}");
    let labels: Vec<&str> = created["head_version"]["version_parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Code"], "the grammar keeps it as text");
    let id = created["id"].as_str().unwrap();

    let extracted = ok(&s, "extract_lens_params", json!({"lens_id": id})).await;
    assert_eq!(extracted["warnings"], the_warning());
    let validated =
        ok(&s, "validate_lens_params", json!({"lens_id": id, "values": {"Language": "Rust", "Code": "x"}}))
            .await;
    assert_eq!(validated["warnings"], the_warning());
    assert_eq!(validated["unknown"], json!(["Language"]), "a value for it has nowhere to go");

    let missing = err(&s, "run_lens", json!({"lens_id": id})).await;
    assert_eq!(missing["details"]["missing"], json!(["Code"]), "Language is never asked for");

    let renamed = ok(&s, "update_lens", json!({"lens_id": id, "title": "Code reviewer"})).await;
    assert_eq!((&renamed["version_created"], &renamed["warnings"]), (&json!(false), &the_warning()));
    let fixed = ok(&s, "update_lens", json!({"lens_id": id, "template_body": CLOSED})).await;
    assert_eq!((&fixed["bump"], &fixed["warnings"]), (&json!("major"), &json!([])), "{fixed}");
    let extracted = ok(&s, "extract_lens_params", json!({"lens_id": id})).await;
    assert_eq!(extracted["warnings"], json!([]));
    let old = ok(
        &s,
        "validate_lens_params",
        json!({"lens_id": id, "version_id": created["head_version"]["id"], "values": {}}),
    )
    .await;
    assert_eq!(old["warnings"], the_warning(), "each version's own template");
}

#[tokio::test]
async fn a_fork_with_a_new_template_is_checked_too() {
    let s = server();
    let created = ok(&s, "create_lens", json!({"title": "Reviewer", "template_body": CLOSED})).await;
    assert_eq!(created["warnings"], json!([]));
    let forked =
        ok(&s, "fork_lens", json!({"source_lens_id": created["id"], "template_body": FORGOTTEN})).await;
    assert_eq!(forked["warnings"], the_warning(), "{forked}");
}
