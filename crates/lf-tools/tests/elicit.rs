//! Elicitation: a client that declared it (form mode) is asked instead of
//! answered CONFIRMATION_REQUIRED or MISSING_PARAMS, in the handshake era
//! (`elicitation/create` through the session) and in 2026-07-28 (an
//! `input_required` result, answered on the retry); a client that declared
//! nothing is answered as before.

use std::sync::Arc;

use lf_core::{LenserId, Principal, Scopes};
use lf_tools::mcp::Classified;
use lf_tools::{Catalog, CatalogOptions, LfServer};
use serde_json::{Value, json};

mod common;
use common::wire::Wire;
use common::{err, ok};

const LEGACY: &str = "2025-11-25";
const INLINE: &str = "2026-07-28";

fn server() -> LfServer {
    let principal = Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE };
    LfServer::new(
        Arc::new(Catalog::new()),
        Arc::new(common::memory_services()),
        CatalogOptions::default(),
        principal,
    )
}

fn form() -> Value {
    json!({"elicitation": {"form": {}}})
}

/// A lens with a select, a number with a default and a required text.
async fn typed_lens(s: &LfServer) -> String {
    let made = ok(
        s,
        "create_lens",
        json!({
            "title": "Reviewer",
            "template_body": "Review this [[Language]] code at depth [[Depth:integer!]] for bugs:\n[[Code]]",
            "params": [
                {"label": "Language", "options": ["Rust", "Go"]},
                {"label": "Depth", "default": "2", "description": "How deep"}
            ]
        }),
    )
    .await;
    made["id"].as_str().unwrap().to_owned()
}

async fn lens(s: &LfServer) -> String {
    ok(s, "create_lens", json!({"title": "Plain", "template_body": "Say the word [[Word]] aloud, slowly and clearly, three times over."})).await["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

fn accept(content: Value) -> impl Fn(&Value) -> Value {
    move |_| json!({"action": "accept", "content": content})
}

fn answer(action: &'static str) -> impl Fn(&Value) -> Value {
    move |_| json!({"action": action})
}

/// The tool result of an answer, which must be one.
fn result(reply: &Value) -> &Value {
    assert!(reply.get("error").is_none(), "{reply}");
    &reply["result"]
}

/// The error code of a tool result, if it is an error.
fn code(result: &Value) -> Option<&str> {
    (result["isError"] == true).then(|| result["structuredContent"]["code"].as_str().unwrap())
}

#[tokio::test]
async fn a_session_confirms_through_the_person() {
    let s = server();
    let mut w = Wire::declaring(s.clone(), LEGACY, form()).await;
    // A tool that takes confirm: asked once it answers CONFIRMATION_REQUIRED.
    for (action, gone) in [("decline", false), ("cancel", false), ("accept", true)] {
        let id = lens(&s).await;
        let (reply, asked) = w
            .request_answering("tools/call", call("delete_lens", json!({"lens_id": id})), answer(action))
            .await;
        assert_eq!(asked.len(), 1, "{reply}");
        let message = asked[0]["message"].as_str().unwrap();
        assert_eq!(
            message,
            format!(
                "Delete a lens (lens_id {id}): Delete your lens: it disappears from every read. Go ahead?"
            )
        );
        assert!(!message.contains("confirm"), "{message}");
        assert_eq!(asked[0]["requestedSchema"], json!({"type": "object", "properties": {}}));
        let r = result(&reply);
        if gone {
            assert_eq!(code(r), None, "{r}");
            assert_eq!(err(&s, "get_lens", json!({"lens_id": id})).await["code"], "NOT_FOUND");
        } else {
            assert_eq!(code(r), Some("DECLINED"), "{r}");
            assert_eq!(r["structuredContent"]["details"]["answer"], action);
            ok(&s, "get_lens", json!({"lens_id": id})).await;
        }
    }
    // A Destructive tool without confirm: asked before it runs.
    let id = lens(&s).await;
    let (reply, asked) = w
        .request_answering("tools/call", call("archive_lens", json!({"lens_id": id})), answer("decline"))
        .await;
    assert_eq!((asked.len(), code(result(&reply))), (1, Some("DECLINED")));
    assert_eq!(ok(&s, "get_lens", json!({"lens_id": id})).await["status"], "published");
    let (reply, _) = w
        .request_answering("tools/call", call("archive_lens", json!({"lens_id": id})), accept(json!({})))
        .await;
    assert_eq!(code(result(&reply)), None);
    assert_eq!(ok(&s, "get_lens", json!({"lens_id": id})).await["status"], "archived");
    // A call that needs confirm only sometimes: moving a battle to
    // archived asks, opening it does not.
    let battle =
        ok(&s, "create_battle", json!({"title": "Duel", "task_prompt": "Write a haiku about Rust."})).await;
    let battle = battle["id"].as_str().unwrap();
    let (reply, asked) = w
        .request_answering(
            "tools/call",
            call("set_battle_status", json!({"battle_id": battle, "status": "archived"})),
            answer("decline"),
        )
        .await;
    assert_eq!((asked.len(), code(result(&reply))), (1, Some("DECLINED")));
    let message = asked[0]["message"].as_str().unwrap();
    assert!(
        message.ends_with("status archived): Archiving a battle (nothing leaves archived). Go ahead?"),
        "{message}"
    );
    let (reply, asked) = w
        .request_answering(
            "tools/call",
            call("set_battle_status", json!({"battle_id": battle, "status": "open"})),
            answer("decline"),
        )
        .await;
    assert_eq!((asked.len(), code(result(&reply))), (0, None), "{reply}");
    let (reply, _) = w
        .request_answering(
            "tools/call",
            call("set_battle_status", json!({"battle_id": battle, "status": "archived"})),
            accept(json!({})),
        )
        .await;
    assert_eq!(result(&reply)["structuredContent"]["status"], "archived", "{reply}");
    // confirm: true given: nobody is asked.
    let (reply, asked) = w
        .request_answering(
            "tools/call",
            call("delete_lens", json!({"lens_id": id, "confirm": true})),
            answer("decline"),
        )
        .await;
    assert_eq!((asked.len(), code(result(&reply))), (0, None));
}

#[tokio::test]
async fn a_2026_request_confirms_through_input_required() {
    let s = server();
    let mut w = Wire::declaring(s.clone(), INLINE, form()).await;
    let id = lens(&s).await;
    let asking = w.result("tools/call", call("delete_lens", json!({"lens_id": id}))).await;
    assert_eq!(asking["resultType"], "input_required", "{asking}");
    let question = &asking["inputRequests"]["confirm"];
    assert_eq!(question["method"], "elicitation/create");
    assert!(question["params"]["message"].as_str().unwrap().contains(&id));
    let state = asking["requestState"].as_str().unwrap().to_owned();
    ok(&s, "get_lens", json!({"lens_id": id})).await;

    let retry = |action: &str, state: &str| {
        let mut params = call("delete_lens", json!({"lens_id": id}));
        params["inputResponses"] = json!({"confirm": {"action": action}});
        params["requestState"] = json!(state);
        params
    };
    // An answer to another question (another state) is not this one's.
    let again = w.result("tools/call", retry("accept", "confirm:0000000000000000")).await;
    assert_eq!(again["resultType"], "input_required");
    let declined = w.result("tools/call", retry("decline", &state)).await;
    assert_eq!(code(&declined), Some("DECLINED"));
    ok(&s, "get_lens", json!({"lens_id": id})).await;
    let done = w.result("tools/call", retry("accept", &state)).await;
    assert_eq!(code(&done), None, "{done}");
    assert_eq!(done["structuredContent"]["lens_id"], id.as_str());
    assert_eq!(err(&s, "get_lens", json!({"lens_id": id})).await["code"], "NOT_FOUND");
}

#[tokio::test]
async fn a_client_that_declared_nothing_is_answered_as_before() {
    for version in [LEGACY, INLINE] {
        let s = server();
        let mut w = Wire::open(s.clone(), version).await;
        let id = lens(&s).await;
        let r = w.result("tools/call", call("delete_lens", json!({"lens_id": id}))).await;
        assert_eq!(code(&r), Some("CONFIRMATION_REQUIRED"), "{version}: {r}");
        let r = w.result("tools/call", call("archive_lens", json!({"lens_id": id}))).await;
        assert_eq!(code(&r), None, "{version}: archive_lens asks nobody: {r}");
        let typed = typed_lens(&s).await;
        let r = w.result("tools/call", call("run_lens", json!({"lens_id": typed}))).await;
        assert_eq!(code(&r), Some("MISSING_PARAMS"), "{version}: {r}");
        let e = w.error("prompts/get", json!({"name": typed})).await;
        assert_eq!(e["data"]["code"], "MISSING_PARAMS", "{version}: {e}");
    }
}

#[tokio::test]
async fn missing_parameters_are_asked_in_one_typed_form() {
    let s = server();
    let mut w = Wire::declaring(s.clone(), LEGACY, form()).await;
    let id = typed_lens(&s).await;
    let (reply, asked) = w
        .request_answering(
            "tools/call",
            call("run_lens", json!({"lens_id": id})),
            accept(json!({"Language": "Go", "Depth": 5, "Code": "x := 1"})),
        )
        .await;
    assert_eq!(asked.len(), 1);
    let schema = &asked[0]["requestedSchema"];
    assert_eq!(schema["required"], json!(["Language", "Code"]));
    assert_eq!(schema["properties"]["Language"]["enum"], json!(["Rust", "Go"]));
    assert_eq!(
        schema["properties"]["Depth"],
        json!({"title": "Depth", "description": "How deep", "type": "integer", "default": 2})
    );
    let r = result(&reply);
    assert_eq!(
        r["structuredContent"]["resolved_prompt"], "Review this Go code at depth 5 for bugs:\nx := 1",
        "{r}"
    );

    // A value the call gave is not asked again.
    let (reply, asked) = w
        .request_answering(
            "tools/call",
            call("find_and_run_lens", json!({"query": "Reviewer", "param_values": {"code": "fn f() {}"}})),
            accept(json!({"Language": "Rust"})),
        )
        .await;
    assert_eq!(asked[0]["requestedSchema"]["required"], json!(["Language"]));
    assert!(asked[0]["requestedSchema"]["properties"].get("Code").is_none());
    let r = result(&reply);
    assert_eq!(r["structuredContent"]["status"], "ready", "{r}");
    assert_eq!(
        r["structuredContent"]["resolved_prompt"],
        "Review this Rust code at depth 2 for bugs:\nfn f() {}"
    );

    let (reply, _) = w
        .request_answering(
            "prompts/get",
            json!({"name": id, "arguments": {"Code": "c"}}),
            accept(json!({"Language": "Go"})),
        )
        .await;
    let text = &result(&reply)["messages"][0]["content"]["text"];
    assert_eq!(text, "Review this Go code at depth 2 for bugs:\nc");

    let (reply, _) =
        w.request_answering("tools/call", call("run_lens", json!({"lens_id": id})), answer("cancel")).await;
    assert_eq!(code(result(&reply)), Some("DECLINED"));
    let (reply, _) = w.request_answering("prompts/get", json!({"name": id}), answer("decline")).await;
    assert_eq!(reply["error"]["data"]["code"], "DECLINED", "{reply}");
}

#[tokio::test]
async fn a_2026_request_gets_its_parameters_on_the_retry() {
    let s = server();
    let mut w = Wire::declaring(s.clone(), INLINE, form()).await;
    let id = typed_lens(&s).await;
    for (method, params) in
        [("tools/call", call("run_lens", json!({"lens_id": id}))), ("prompts/get", json!({"name": id}))]
    {
        let asking = w.result(method, params.clone()).await;
        assert_eq!(asking["resultType"], "input_required", "{asking}");
        let question = &asking["inputRequests"]["params"]["params"];
        assert_eq!(question["requestedSchema"]["required"], json!(["Language", "Code"]));
        let mut retry = params;
        retry["inputResponses"] =
            json!({"params": {"action": "accept", "content": {"Language": "Rust", "Code": "c"}}});
        retry["requestState"] = asking["requestState"].clone();
        let done = w.result(method, retry).await;
        let text = match method {
            "tools/call" => done["structuredContent"]["resolved_prompt"].clone(),
            _ => done["messages"][0]["content"]["text"].clone(),
        };
        assert_eq!(text, "Review this Rust code at depth 2 for bugs:\nc", "{done}");
    }
}

/// A session whose client declared elicitation has its calls that may ask
/// go through rmcp (whose peer can ask); the others, and every call of a
/// client that declared nothing, stay on the direct path.
#[tokio::test]
async fn only_calls_that_may_ask_leave_the_direct_path() {
    let line = |tool: &str| {
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
            .to_string()
            .into_bytes()
    };
    let version = rmcp::model::ProtocolVersion::V_2025_11_25;
    for (capabilities, asks) in [(form(), true), (json!({}), false)] {
        let s = server();
        let _w = Wire::declaring(s.clone(), LEGACY, capabilities).await;
        for (tool, may_ask) in [
            ("delete_lens", true),
            ("archive_lens", true),
            ("set_battle_status", true),
            ("run_lens", true),
            ("get_lens", false),
            ("create_lens", false),
        ] {
            let direct =
                matches!(s.classify(&line(tool), s.principal(), Some(&version)), Classified::Direct(_));
            assert_eq!(direct, !(asks && may_ask), "{tool}, declared {asks}");
        }
    }
}

/// A team run awaiting approval is decided by the person it awaits, asked
/// through their client; anyone else is not asked.
#[tokio::test]
async fn an_approval_is_decided_by_the_person_it_awaits() {
    let alice = LenserId::new();
    let s = LfServer::new(
        Arc::new(Catalog::new()),
        Arc::new(common::memory_services()),
        CatalogOptions::default(),
        Principal::Lenser { id: alice, scopes: Scopes::READ_WRITE },
    );
    let agent =
        ok(&s, "create_ai_lenser", json!({"handle": "asker", "display_name": "Asker"})).await["ai_lenser_id"]
            .as_str()
            .unwrap()
            .to_owned();
    let flow = ok(
        &s,
        "create_workflow",
        json!({"title": "Flow", "visibility": "private",
            "steps": [{"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                      {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}],
            "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]}),
    )
    .await;
    let service = s.for_principal(Principal::Service { acting_as: Some(alice) });
    let start = json!({"ai_lenser_id": agent, "workflow_id": flow["id"], "policy": "approval_required"});
    let awaiting = || async {
        let run = ok(&service, "start_agent_team_run", start.clone()).await;
        assert_eq!(run["status"], "awaiting_approval");
        run["team_run_id"].as_str().unwrap().to_owned()
    };
    let decide = |run: &str| {
        call(
            "decide_agent_approval",
            json!({"ai_lenser_id": agent, "team_run_id": run, "decision": "approve"}),
        )
    };
    for version in [LEGACY, INLINE] {
        let mut w = Wire::declaring(s.clone(), version, form()).await;
        // The person overrules the call's decision.
        let run = awaiting().await;
        let r = if version == LEGACY {
            let (reply, asked) = w
                .request_answering(
                    "tools/call",
                    decide(&run),
                    accept(json!({"decision": "reject", "reason": "not now"})),
                )
                .await;
            assert_eq!(asked.len(), 1);
            assert!(asked[0]["message"].as_str().unwrap().contains("@asker's team run"), "{}", asked[0]);
            assert_eq!(asked[0]["requestedSchema"]["properties"]["decision"]["default"], "approve");
            result(&reply).clone()
        } else {
            let asking = w.result("tools/call", decide(&run)).await;
            assert_eq!(asking["resultType"], "input_required", "{asking}");
            let mut retry = decide(&run);
            retry["inputResponses"] = json!({"decision": {"action": "accept", "content": {"decision": "reject", "reason": "not now"}}});
            retry["requestState"] = asking["requestState"].clone();
            w.result("tools/call", retry).await
        };
        assert_eq!(r["structuredContent"]["status"], "rejected", "{version}: {r}");
        // Declined: nothing is decided.
        let run = awaiting().await;
        let r = if version == LEGACY {
            let (reply, _) = w.request_answering("tools/call", decide(&run), answer("decline")).await;
            result(&reply).clone()
        } else {
            let asking = w.result("tools/call", decide(&run)).await;
            let mut retry = decide(&run);
            retry["inputResponses"] = json!({"decision": {"action": "decline"}});
            retry["requestState"] = asking["requestState"].clone();
            w.result("tools/call", retry).await
        };
        assert_eq!(code(&r), Some("DECLINED"), "{version}: {r}");
        // Someone the run does not await is not asked.
        let bob = s.for_principal(Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE });
        let mut b = Wire::declaring(bob, version, form()).await;
        let (reply, asked) = b.request_answering("tools/call", decide(&run), answer("accept")).await;
        assert_eq!((asked.len(), code(result(&reply))), (0, Some("NOT_FOUND")), "{version}: {reply}");
        // The run still awaits alice, who approves it as the call says.
        let (reply, _) =
            w.request_answering("tools/call", decide(&run), accept(json!({"decision": "approve"}))).await;
        if version == LEGACY {
            assert_eq!(result(&reply)["structuredContent"]["status"], "queued", "{reply}");
        } else {
            assert_eq!(result(&reply)["resultType"], "input_required", "{reply}");
        }
    }
}
