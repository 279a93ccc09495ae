//! `LfServer::classify` and `classify_body`: what each transport learns of
//! a message from its one reading.

#[allow(dead_code, reason = "these tests read messages, not tool results")]
mod common;

use lf_core::{LenserId, Principal, Scopes};
use lf_tools::mcp::{Classified, Envelope, Refusal};
use lf_tools::{Catalog, CatalogOptions, LfServer};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ProtocolVersion};
use serde_json::{Value, json};
use std::sync::Arc;

fn server() -> LfServer {
    let services = Arc::new(common::memory_services());
    let service = Principal::Service { acting_as: Some(LenserId::new()) };
    LfServer::new(Arc::new(Catalog::new()), services, CatalogOptions::default(), service)
}

fn lenser(scopes: Scopes) -> Principal {
    Principal::Lenser { id: LenserId::new(), scopes }
}

const V: ProtocolVersion = ProtocolVersion::V_2025_06_18;

/// A line's message as rmcp gets it is the message rmcp reads from the
/// line, tool calls (read first, their own way) and every other line alike.
#[test]
fn parity_tool_calls_read_as_rmcp_reads_them() {
    let s = server();
    let lines = [
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_lens","arguments":{"lens_id":"x"}}}"#,
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"n","_meta":{"progressToken":1}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        // Broken calls, which rmcp reads as custom requests.
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#,
    ];
    for line in lines {
        let generic = serde_json::to_value(serde_json::from_str::<ClientJsonRpcMessage>(line).unwrap());
        let Classified::Rmcp(read) = s.classify(line.as_bytes(), s.principal(), None) else {
            panic!("{line}: not for rmcp")
        };
        assert_eq!(serde_json::to_value(read).unwrap(), generic.unwrap(), "{line}");
    }
    let Classified::Rmcp(ClientJsonRpcMessage::Request(r)) =
        s.classify(lines[1].as_bytes(), s.principal(), None)
    else {
        panic!("not a request")
    };
    assert!(matches!(r.request, ClientRequest::CallToolRequest(_)));
}

/// A plain call is answered directly where the transport may, in the
/// version it gives; a call that names its version, or one where the
/// transport gives none, is rmcp's.
#[test]
fn plain_calls_are_direct() {
    let s = server();
    let call =
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_lens","arguments":{}}}"#;
    match s.classify(call, s.principal(), Some(&V)) {
        Classified::Direct(c) => assert_eq!((c.tool(), c.id().to_string()), ("get_lens", "1".to_owned())),
        other => panic!("{other:?}"),
    }
    assert!(matches!(s.classify_body(call, s.principal(), Some(&V)), Classified::Direct(_)));
    assert!(matches!(s.classify(call, s.principal(), None), Classified::Rmcp(_)));
    let named = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_lens","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}"#;
    assert!(matches!(s.classify(named, s.principal(), Some(&V)), Classified::Rmcp(_)));
    match s.classify_body(named, s.principal(), Some(&V)) {
        Classified::Rmcp(e) => assert_eq!((e.initialize(), e.request_id()), (false, Some(&json!(1)))),
        other => panic!("{other:?}"),
    }
}

/// A read-only token may call Read tools only: a call of any other tool
/// this server offers is refused, however it comes (directly, for rmcp,
/// broken, as a notification); a tool the server does not offer is left
/// for the call to answer that it is unknown.
#[test]
fn a_read_only_token_is_refused_the_other_tools() {
    let s = server();
    let read_only = lenser(Scopes::READ);
    let call = |tool: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
        )
    };
    let scope = Refusal::Scope { tool: "create_lens".into(), id: Some(json!(9)) };
    for version in [Some(&V), None] {
        let refused = s.classify(call("create_lens").as_bytes(), &read_only, version);
        assert!(matches!(&refused, Classified::Refused(r) if *r == scope), "{refused:?}");
        let refused = s.classify_body(call("create_lens").as_bytes(), &read_only, version);
        assert!(matches!(&refused, Classified::Refused(r) if *r == scope), "{refused:?}");
        assert!(!matches!(
            s.classify(call("get_lens").as_bytes(), &read_only, version),
            Classified::Refused(_)
        ));
        assert!(!matches!(
            s.classify(call("no_such_tool").as_bytes(), &read_only, version),
            Classified::Refused(_)
        ));
        let writer = lenser(Scopes::READ_WRITE);
        assert!(!matches!(
            s.classify(call("create_lens").as_bytes(), &writer, version),
            Classified::Refused(_)
        ));
    }
    for odd in [
        // Broken, as rmcp reads it (a custom request) and as it does not.
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"create_lens","arguments":[1]}}"#,
        r#"{"jsonrpc":"1.0","id":9,"method":"tools/call","params":{"name":"create_lens"}}"#,
    ] {
        let refused = s.classify(odd.as_bytes(), &read_only, None);
        assert!(matches!(&refused, Classified::Refused(r) if *r == scope), "{odd}: {refused:?}");
        let refused = s.classify_body(odd.as_bytes(), &read_only, None);
        assert!(matches!(&refused, Classified::Refused(r) if *r == scope), "{odd}: {refused:?}");
    }
    let note = br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"create_lens"}}"#;
    let refused = s.classify(note, &read_only, None);
    assert!(matches!(&refused, Classified::Refused(Refusal::Scope { id: None, .. })), "{refused:?}");
    let Classified::Refused(refusal) = refused else { unreachable!() };
    assert_eq!(refusal.answer(), None, "a notification gets no answer");
    let answer = scope.answer().unwrap();
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(9), json!(-32600)));
    // The Service principal has no token.
    assert!(matches!(s.classify(call("create_lens").as_bytes(), s.principal(), None), Classified::Rmcp(_)));
}

/// A message rmcp cannot read is answered as the transports answer it: a
/// line (or batch member) with `jsonrpc::reject`'s error, a body that is
/// not JSON with a parse error naming serde's reason, one nested too
/// deeply with its own id.
#[test]
fn unreadable_messages_get_their_answers() {
    let s = server();
    let who = lenser(Scopes::READ_WRITE);
    let answer = |c: Classified<ClientJsonRpcMessage>| match c {
        Classified::Refused(Refusal::Unreadable(a)) => a,
        other => panic!("{other:?}"),
    };
    let body_answer = |c: Classified<Envelope>| match c {
        Classified::Refused(Refusal::Unreadable(Some(a))) => a,
        other => panic!("{other:?}"),
    };
    let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"x"}"#;
    let a = answer(s.classify(line, &who, Some(&V))).unwrap();
    assert_eq!((a["id"].clone(), a["error"]["code"].clone()), (json!(7), json!(-32602)));
    assert_eq!(answer(s.classify(b"{not json}", &who, None)).unwrap()["error"]["code"], -32700);
    assert_eq!(answer(s.classify(br#"{"jsonrpc":"2.0","method":"m","params":"x"}"#, &who, None)), None);
    // A body: rmcp answers what it cannot read, as long as it is JSON.
    assert!(matches!(s.classify_body(line, &who, Some(&V)), Classified::Rmcp(_)));
    let a = body_answer(s.classify_body(b"{not json}", &who, None));
    assert_eq!(a["error"]["code"], -32700);
    assert!(a["error"]["message"].as_str().unwrap().starts_with("Parse error: key must be a string"), "{a}");
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{{"name":"get_lens","arguments":{{"x":{}{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let a = body_answer(s.classify_body(deep.as_bytes(), &who, Some(&V)));
    assert_eq!((a["id"].clone(), a["error"]["code"].clone()), (json!("d"), json!(-32602)));
    let a = answer(s.classify(deep.as_bytes(), &who, Some(&V))).unwrap();
    assert_eq!(a["id"], "d");
}

/// What the HTTP endpoint checks: an `initialize`, and a request's id as
/// the client wrote it (for the ids in flight in a session).
#[test]
fn the_envelope_names_initialize_and_the_request_id() {
    let s = server();
    let who = lenser(Scopes::READ_WRITE);
    let envelope = |text: &str| match s.classify_body(text.as_bytes(), &who, None) {
        Classified::Rmcp(e) => e,
        other => panic!("{other:?}"),
    };
    let init = envelope(r#"{"jsonrpc":"2.0","id":1.0,"method":"initialize","params":{}}"#);
    assert!(init.initialize());
    assert_eq!(init.request_id().map(Value::to_string).as_deref(), Some("1.0"));
    let note = envelope(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    assert_eq!((note.initialize(), note.request_id()), (false, None));
    let list = envelope(r#"{"jsonrpc":"2.0","id":"x","method":"tools/list"}"#);
    assert_eq!(list.request_id(), Some(&json!("x")));
    // A batch member is read as rmcp reads it.
    let Classified::Rmcp(message) =
        s.classify(br#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#, &who, None)
    else {
        panic!("not for rmcp")
    };
    let of = Envelope::of(&message);
    assert_eq!((of.initialize(), of.request_id()), (true, Some(&json!(3))));
}
