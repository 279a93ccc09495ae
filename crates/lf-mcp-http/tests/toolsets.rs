//! Dynamic toolsets over HTTP: a stateless caller names its toolsets in an
//! `X-MCP-Toolsets` header; with sessions, each session enables its own.

mod common;

use common::{Options, Server, client};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn post(s: &Server, headers: &[(&str, &str)], body: Value) -> reqwest::Response {
    let mut r = client()
        .post(s.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    r.send().await.unwrap()
}

/// The messages of an answer, JSON or an event stream.
async fn messages(r: reqwest::Response) -> Vec<Value> {
    assert_eq!(r.status(), StatusCode::OK);
    let body = r.text().await.unwrap();
    if !body.starts_with('{') {
        let data = body.lines().filter_map(|l| l.strip_prefix("data:")).filter(|d| !d.trim().is_empty());
        return data
            .map(|d| serde_json::from_str(d.trim()).unwrap_or_else(|e| panic!("{e}: {body}")))
            .collect();
    }
    vec![serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"))]
}

/// The answer (the message with an id) of a response.
async fn message(r: reqwest::Response) -> Value {
    messages(r).await.into_iter().find(|m| m.get("id").is_some()).expect("an answer")
}

fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn a_stateless_caller_names_its_toolsets_in_a_header() {
    let s = Server::with(Options { dynamic_toolsets: true, ..Options::dev() }).await;
    let list = rpc(1, "tools/list", json!({}));
    assert_eq!(names(&message(post(&s, &[], list.clone()).await).await), ["list_toolsets", "enable_toolset"]);
    let with_lens = names(&message(post(&s, &[("x-mcp-toolsets", "lens")], list.clone()).await).await);
    assert_eq!(with_lens.len(), 2 + 20, "{with_lens:?}");
    let both = names(&message(post(&s, &[("x-mcp-toolsets", "lens, battle")], list).await).await);
    assert_eq!(both.len(), 2 + 30);

    let call = rpc(2, "tools/call", json!({"name": "list_lenses", "arguments": {}}));
    let refused = message(post(&s, &[], call.clone()).await).await;
    assert!(refused["error"]["message"].as_str().unwrap().contains("enable_toolset"), "{refused}");
    let listed = message(post(&s, &[("x-mcp-toolsets", "lens")], call).await).await;
    assert_eq!(listed["result"]["structuredContent"]["total"], 0, "{listed}");

    // Every stateless request is a session of its own: enabling lasts for it alone.
    let enable = rpc(3, "tools/call", json!({"name": "enable_toolset", "arguments": {"toolset": "battle"}}));
    let enabled = messages(post(&s, &[], enable).await).await;
    assert_eq!(enabled[0]["method"], "notifications/tools/list_changed", "{enabled:?}");
    assert_eq!(enabled[1]["result"]["structuredContent"]["newly_enabled"], true, "{enabled:?}");
    assert_eq!(names(&message(post(&s, &[], rpc(4, "tools/list", json!({}))).await).await).len(), 2);
    s.stop().await;
}

#[tokio::test]
async fn with_sessions_each_session_enables_its_own() {
    let s = Server::with(Options { dynamic_toolsets: true, sessions: true, ..Options::dev() }).await;
    let open = async || {
        let init = rpc(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        let r = post(&s, &[], init).await;
        let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let caps = message(r).await;
        assert_eq!(caps["result"]["capabilities"]["tools"]["listChanged"], true, "{caps}");
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(post(&s, &[("mcp-session-id", &session)], done).await.status(), StatusCode::ACCEPTED);
        session
    };
    let (one, two) = (open().await, open().await);
    let list = |session: &str| {
        let headers =
            [("mcp-session-id", session.to_owned()), ("mcp-protocol-version", "2025-11-25".to_owned())];
        let s = &s;
        async move {
            let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            names(&message(post(s, &headers, rpc(5, "tools/list", json!({}))).await).await)
        }
    };
    let headers = [("mcp-session-id", one.as_str()), ("mcp-protocol-version", "2025-11-25")];
    // The session's own stream, where its notifications go.
    let mut stream = client()
        .get(s.url("/mcp"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", one.as_str())
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let enable = rpc(6, "tools/call", json!({"name": "enable_toolset", "arguments": {"toolset": "lens"}}));
    let enabled = message(post(&s, &headers, enable).await).await;
    assert_eq!(enabled["result"]["structuredContent"]["newly_enabled"], true, "{enabled}");
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    while !seen.contains("notifications/tools/list_changed") {
        let chunk =
            tokio::time::timeout_at(deadline, stream.chunk()).await.expect("the notification within 5 s");
        seen.push_str(&String::from_utf8_lossy(&chunk.unwrap().expect("the stream stays open")));
    }
    assert_eq!(list(&one).await.len(), 2 + 20);
    assert_eq!(list(&two).await.len(), 2, "the other session is untouched");
    drop(stream);
    s.stop().await;
}

/// The toolsets' icons (SEP-973): list_toolsets names each one's under the
/// public URL, the tools of an opt-in group carry it in tools/list (those
/// of the default groups do not: the default listing's budget), and the
/// client fetches each SVG with no token, as an image only.
#[tokio::test]
async fn a_client_reads_the_toolsets_icons_and_fetches_them() {
    let s = Server::with(Options { dynamic_toolsets: true, ..Options::dev() }).await;
    let call = rpc(1, "tools/call", json!({"name": "list_toolsets", "arguments": {}}));
    let listed = message(post(&s, &[], call).await).await;
    let toolsets = listed["result"]["structuredContent"]["toolsets"].as_array().unwrap().clone();
    assert_eq!(toolsets.len(), 8, "{listed}");
    let list = rpc(2, "tools/list", json!({}));
    let tools = message(post(&s, &[("x-mcp-toolsets", "lens,model")], list).await).await;
    let tools = tools["result"]["tools"].as_array().unwrap();
    let mut svgs = Vec::new();
    for toolset in &toolsets {
        let (id, url) = (toolset["id"].as_str().unwrap(), toolset["icon"].as_str().unwrap());
        assert_eq!(url, s.url(&format!("/icons/{id}.svg")), "{toolset}");
        let icon = client().get(url).send().await.unwrap();
        assert_eq!(icon.status(), StatusCode::OK, "{url}");
        let header = |name: &str| icon.headers()[name].to_str().unwrap().to_owned();
        assert_eq!(header("content-type"), "image/svg+xml");
        assert_eq!(header("x-content-type-options"), "nosniff");
        assert!(header("content-security-policy").starts_with("default-src 'none'"));
        assert!(header("cache-control").starts_with("public, max-age="));
        let svg = icon.text().await.unwrap();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{svg}");
        svgs.push(svg);
    }
    svgs.sort();
    svgs.dedup();
    assert_eq!(svgs.len(), toolsets.len(), "each toolset has an icon of its own");
    let mut model_tools = 0;
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        if name.contains("model_profile") {
            model_tools += 1;
            assert_eq!(tool["icons"], json!([{"src": s.url("/icons/model.svg")}]), "{name}");
        } else {
            assert!(tool.get("icons").is_none(), "{name}: a default group's tool carries no icon");
        }
    }
    assert_eq!(model_tools, 4);
    for bad in ["/icons/nope.svg", "/icons/lens.png", "/icons/..%2Fmcp.svg"] {
        assert_eq!(client().get(s.url(bad)).send().await.unwrap().status(), StatusCode::NOT_FOUND, "{bad}");
    }
    s.stop().await;
}
