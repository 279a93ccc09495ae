//! A call the person declined or dismissed is counted in the tool-call
//! metrics with outcome DECLINED, whether it was asked before the tool ran
//! or after, in the handshake era and on a 2026-07-28 retry. (One test in
//! its own binary: the meter it installs is the process's.)

use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use lf_core::meter::{Meter, Outcome};
use lf_core::{LenserId, Principal, Scopes};
use lf_tools::{Catalog, CatalogOptions, LfServer};
use serde_json::{Value, json};

mod common;
use common::wire::Wire;
use common::{err, ok};

/// The tool calls counted, in order.
#[derive(Default)]
struct Counted(Mutex<Vec<(&'static str, Outcome)>>);

impl Meter for Counted {
    fn tool_call(&self, tool: &'static str, outcome: Outcome, _took: Duration) {
        self.0.lock().unwrap().push((tool, outcome));
    }
}

static COUNTED: LazyLock<Counted> = LazyLock::new(Counted::default);

fn counted(tool: &str, outcome: &str) -> usize {
    COUNTED.0.lock().unwrap().iter().filter(|(t, o)| *t == tool && *o == outcome).count()
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

fn answer(action: &'static str) -> impl Fn(&Value) -> Value {
    move |_| json!({"action": action})
}

#[tokio::test]
async fn a_declined_call_is_counted_declined() {
    assert!(lf_core::meter::install(&*COUNTED), "the first meter of this process");
    let principal = Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE };
    let s = LfServer::new(
        Arc::new(Catalog::new()),
        Arc::new(common::memory_services()),
        CatalogOptions::default(),
        principal,
    );
    let lens = |title: &'static str| {
        let s = s.clone();
        async move {
            let made = ok(&s, "create_lens", json!({"title": title, "template_body": "Say the word [[Word]] aloud, slowly and clearly, three times over."})).await;
            made["id"].as_str().unwrap().to_owned()
        }
    };
    let (a, b, c) = (lens("A").await, lens("B").await, lens("C").await);
    let form = json!({"elicitation": {"form": {}}});
    let mut legacy = Wire::declaring(s.clone(), "2025-11-25", form.clone()).await;
    // Asked before it runs: the tool never ran.
    let (reply, _) = legacy
        .request_answering("tools/call", call("archive_lens", json!({"lens_id": a})), answer("decline"))
        .await;
    assert_eq!(reply["result"]["structuredContent"]["code"], "DECLINED", "{reply}");
    assert_eq!(counted("archive_lens", "DECLINED"), 1);
    assert_eq!(COUNTED.0.lock().unwrap().iter().filter(|(t, _)| *t == "archive_lens").count(), 1);
    // Asked once it answered CONFIRMATION_REQUIRED, then dismissed.
    let (reply, _) = legacy
        .request_answering("tools/call", call("delete_lens", json!({"lens_id": b})), answer("cancel"))
        .await;
    assert_eq!(reply["result"]["structuredContent"]["code"], "DECLINED", "{reply}");
    assert_eq!(counted("delete_lens", "DECLINED"), 1);
    // Declined on a 2026-07-28 retry.
    let mut inline = Wire::declaring(s.clone(), "2026-07-28", form).await;
    let asking = inline.result("tools/call", call("delete_lens", json!({"lens_id": c}))).await;
    assert_eq!(asking["resultType"], "input_required", "{asking}");
    let mut retry = call("delete_lens", json!({"lens_id": c}));
    retry["inputResponses"] = json!({"confirm": {"action": "decline"}});
    retry["requestState"] = asking["requestState"].clone();
    let declined = inline.result("tools/call", retry).await;
    assert_eq!(declined["structuredContent"]["code"], "DECLINED", "{declined}");
    assert_eq!(counted("delete_lens", "DECLINED"), 2);
    // An accepted call is counted as it ended, not DECLINED.
    let (reply, _) = legacy
        .request_answering(
            "tools/call",
            call("archive_lens", json!({"lens_id": a})),
            |_| json!({"action": "accept", "content": {}}),
        )
        .await;
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(counted("archive_lens", "ok"), 1);
    assert_eq!(counted("archive_lens", "DECLINED"), 1);
    let (reply, _) = legacy
        .request_answering(
            "tools/call",
            call("delete_lens", json!({"lens_id": b})),
            |_| json!({"action": "accept", "content": {}}),
        )
        .await;
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(err(&s, "get_lens", json!({"lens_id": b})).await["code"], "NOT_FOUND");
    assert_eq!(counted("delete_lens", "DECLINED"), 2);
}
