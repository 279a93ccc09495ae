//! The README's workflow example works as written: its create_lens and
//! create_workflow arguments, read from the README, create a lens and a
//! workflow that validates with no error or warning and is ready to run.

use lf_core::LenserId;
use lf_tests::{StoreKind, TestStore, call, lenser};
use serde_json::{Value, json};

/// The JSON block that follows `<!-- example: {name} -->` in the README.
fn example(readme: &str, name: &str) -> Value {
    let marker = format!("<!-- example: {name} -->");
    let after = &readme[readme.find(&marker).unwrap_or_else(|| panic!("README.md lacks {marker}"))..];
    let start = after.find("```json\n").expect("a json block after the marker") + "```json\n".len();
    let end = after[start..].find("```").expect("the block ends");
    serde_json::from_str(&after[start..start + end])
        .unwrap_or_else(|e| panic!("the README's {name} example is not JSON: {e}"))
}

#[tokio::test]
async fn the_readme_blueprint_creates_and_validates() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).expect("README.md");
    let store = TestStore::open(StoreKind::Memory).await;
    let me = LenserId::new();
    let caller = store.server(lenser(me));
    store.save_connection(me, "slack", "team-slack").await;

    let lens = call(&caller, "create_lens", example(&readme, "create_lens")).await.expect("a tool result");
    assert!(!lens.is_error, "the README's lens: {}", lens.brief());
    let mut blueprint = example(&readme, "create_workflow");
    let steps = blueprint["steps"].as_array_mut().expect("steps");
    let lens_step =
        steps.iter_mut().find(|s| s["lens_id"] == "LENS_ID").expect("a lens step whose id is LENS_ID");
    lens_step["lens_id"] = json!(lens.str("id"));

    let created = call(&caller, "create_workflow", blueprint).await.expect("a tool result");
    assert!(!created.is_error, "the README's blueprint: {}", created.brief());
    assert_eq!(created.value["warnings"], json!([]), "{}", created.brief());
    let id = created.str("id");
    let checked =
        call(&caller, "validate_workflow", json!({"workflow_id": id})).await.expect("a tool result");
    let report = &checked.value;
    assert_eq!((&report["valid"], &report["run_ready"]), (&json!(true), &json!(true)), "{}", checked.brief());
    assert_eq!((&report["errors"], &report["warnings"]), (&json!([]), &json!([])));
    assert_eq!(report["execution_order"], json!(["start", "feed", "titles", "digest", "post"]));
}
