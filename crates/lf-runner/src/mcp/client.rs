//! A small MCP client over Streamable HTTP, through the egress guard: one
//! JSON-RPC request per POST, its answer read as JSON or as a server-sent
//! event stream, the `Mcp-Session-Id` a server hands out sent back.
//!
//! Both protocol eras: the handshake (`initialize`, then
//! `notifications/initialized`, then the version in `MCP-Protocol-Version`);
//! a server that does not know `initialize` is asked again in 2026-07-28's
//! per-request envelope (the version in each request's `params._meta` and
//! headers, with `Mcp-Method` and `Mcp-Name`).
//!
//! rmcp's client is not used: its transport brings its own HTTP client,
//! and every request here must go through [`Egress`] (the allow-list,
//! checked addresses, the body limit).
//!
//! No message of this module holds the connection's secret: errors name
//! the URL's origin, the status and the start of the answer, and what the
//! server said passes the step's redaction besides.

use std::time::Duration;

use lf_core::LfError;
use lf_egress::{Egress, EgressError, EgressErrorKind, EgressRequest, HeaderName, HeaderValue, Method, Url};
use lf_workflow::connection::{ListedTool, MAX_TOOLS, McpEndpoint};
use serde_json::{Map, Value, json};

/// The version the handshake asks for.
pub const HANDSHAKE_VERSION: &str = "2025-06-18";
/// The version of the per-request envelope.
pub const ENVELOPE_VERSION: &str = "2026-07-28";
/// Pages of `tools/list` read before giving up on a server that never ends.
const MAX_PAGES: usize = 50;

/// Why a call to an outside MCP server gave no result.
#[derive(Debug)]
pub enum McpFailure {
    /// No answer: a refused address, DNS, connection, too large.
    Unreachable(String),
    /// No answer in time.
    Timeout(String),
    /// The server refused the credentials (401 or 403).
    Unauthorized(String),
    /// An answer that is not MCP, or a JSON-RPC error.
    Protocol(String),
}

impl McpFailure {
    pub fn message(&self) -> &str {
        match self {
            McpFailure::Unreachable(m)
            | McpFailure::Timeout(m)
            | McpFailure::Unauthorized(m)
            | McpFailure::Protocol(m) => m,
        }
    }
}

/// One conversation with a server: its session and version.
struct Session<'a> {
    ep: &'a McpEndpoint,
    url: Url,
    session_id: Option<HeaderValue>,
    /// `None` before the handshake; the envelope's version when there is none.
    version: Option<&'static str>,
    envelope: bool,
    next_id: u64,
}

/// The MCP client: cheap to clone.
#[derive(Clone, Debug)]
pub struct McpClient {
    egress: Egress,
}

impl McpClient {
    pub fn new(egress: Egress) -> Self {
        McpClient { egress }
    }

    async fn open<'a>(&self, ep: &'a McpEndpoint) -> Result<Session<'a>, McpFailure> {
        let url =
            Url::parse(&ep.url).map_err(|e| McpFailure::Protocol(format!("the url is not a URL: {e}")))?;
        let mut s = Session { ep, url, session_id: None, version: None, envelope: false, next_id: 1 };
        let params = json!({
            "protocolVersion": HANDSHAKE_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "lenserfight", "version": env!("CARGO_PKG_VERSION")},
        });
        match self.request(&mut s, "initialize", params, None).await {
            Ok(result) => {
                if result.get("protocolVersion").and_then(Value::as_str).is_none() {
                    return Err(McpFailure::Protocol(format!(
                        "{} answered initialize without a protocolVersion: it does not look like an MCP server",
                        origin(&s.url)
                    )));
                }
                s.version = Some(HANDSHAKE_VERSION);
                self.notify(&mut s, "notifications/initialized").await?;
            }
            // A server of the envelope era knows no `initialize`.
            Err(McpFailure::Protocol(m)) if m.contains("-32601") || m.contains("status 404") => {
                s.envelope = true;
                s.version = Some(ENVELOPE_VERSION);
            }
            Err(e) => return Err(e),
        }
        Ok(s)
    }

    /// The server's tools, page by page, at most [`MAX_TOOLS`].
    pub async fn tools(&self, ep: &McpEndpoint) -> Result<Vec<ListedTool>, McpFailure> {
        let mut s = self.open(ep).await?;
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = self.request(&mut s, "tools/list", params, None).await?;
            let Some(listed) = page.get("tools").and_then(Value::as_array) else {
                return Err(McpFailure::Protocol(format!(
                    "{} answered tools/list without a tools array",
                    origin(&s.url)
                )));
            };
            for t in listed {
                if tools.len() == MAX_TOOLS {
                    return Ok(tools);
                }
                tools.push(listed_tool(t).map_err(McpFailure::Protocol)?);
            }
            cursor = page.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
            if cursor.is_none() {
                break;
            }
        }
        self.close(&s);
        Ok(tools)
    }

    /// Calls `tool` with `arguments`: its result object (`isError` is the
    /// caller's to read).
    pub async fn call(&self, ep: &McpEndpoint, tool: &str, arguments: Value) -> Result<Value, McpFailure> {
        let mut s = self.open(ep).await?;
        let result = self
            .request(&mut s, "tools/call", json!({"name": tool, "arguments": arguments}), Some(tool))
            .await;
        self.close(&s);
        result
    }

    /// Ends the session the server handed out, if it did (the transport's
    /// DELETE, no JSON-RPC method), in the background: the caller has its
    /// answer, and a server may refuse the DELETE (405) or never answer it.
    fn close(&self, s: &Session<'_>) {
        if s.session_id.is_none() {
            return;
        }
        let Ok(r) = self.with_headers(s, EgressRequest::new(Method::DELETE, s.url.clone()), "", None) else {
            return;
        };
        let (egress, after) = (self.egress.clone(), Duration::from_secs(s.ep.timeout_secs));
        tokio::spawn(async move {
            let _ = tokio::time::timeout(after, egress.send(r)).await;
        });
    }

    async fn notify(&self, s: &mut Session<'_>, method: &str) -> Result<(), McpFailure> {
        let body = json!({"jsonrpc": "2.0", "method": method});
        let answer = self.post(s, method, None, &body).await?;
        if !answer.status.is_success() {
            return Err(McpFailure::Protocol(format!(
                "{} answered {method} with status {}",
                origin(&s.url),
                answer.status.as_u16()
            )));
        }
        Ok(())
    }

    /// Sends one request and reads its result.
    async fn request(
        &self,
        s: &mut Session<'_>,
        method: &str,
        mut params: Value,
        name: Option<&str>,
    ) -> Result<Value, McpFailure> {
        if s.envelope {
            let meta = json!({"io.modelcontextprotocol/protocolVersion": ENVELOPE_VERSION, "io.modelcontextprotocol/clientCapabilities": {}});
            if let Some(p) = params.as_object_mut() {
                p.insert("_meta".into(), meta);
            }
        }
        let id = s.next_id;
        s.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = self.post(s, method, name, &body).await?;
        let at = origin(&s.url);
        if let Some(sid) = answer.headers.get("mcp-session-id") {
            s.session_id = Some(sid.clone());
        }
        let status = answer.status.as_u16();
        if status == 401 || status == 403 {
            return Err(McpFailure::Unauthorized(format!(
                "{at} refused the credentials (status {status}): check the connection's token or header"
            )));
        }
        let kind = answer
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let message = if kind.starts_with("text/event-stream") {
            from_events(&answer.body, id)
        } else {
            serde_json::from_slice::<Value>(&answer.body).ok()
        };
        let Some(message) = message.filter(|m| m.get("jsonrpc").is_some()) else {
            return Err(McpFailure::Protocol(format!(
                "{at} answered {method} with status {status} and no JSON-RPC message ({}): it does not look like an MCP server",
                excerpt(&answer.body)
            )));
        };
        if let Some(e) = message.get("error") {
            let code = e.get("code").and_then(Value::as_i64).unwrap_or_default();
            let text = e.get("message").and_then(Value::as_str).unwrap_or("no message");
            return Err(McpFailure::Protocol(format!(
                "{at} answered {method} with error {code} (status {status}): {}",
                lf_core::clip(text, 300)
            )));
        }
        match message.get("result") {
            Some(r @ Value::Object(_)) => Ok(r.clone()),
            _ => Err(McpFailure::Protocol(format!("{at} answered {method} without a result object"))),
        }
    }

    async fn post(
        &self,
        s: &Session<'_>,
        method: &str,
        name: Option<&str>,
        body: &Value,
    ) -> Result<lf_egress::EgressResponse, McpFailure> {
        let r = EgressRequest::new(Method::POST, s.url.clone())
            .header(HeaderName::from_static("content-type"), HeaderValue::from_static("application/json"))
            .header(
                HeaderName::from_static("accept"),
                HeaderValue::from_static("application/json, text/event-stream"),
            )
            .body(serde_json::to_vec(body).unwrap_or_default());
        let r = self.with_headers(s, r, method, name)?;
        let after = Duration::from_secs(s.ep.timeout_secs);
        match tokio::time::timeout(after, self.egress.send(r)).await {
            Err(_) => Err(McpFailure::Timeout(format!(
                "{} gave no answer to {method} within {} s (the connection's timeout_secs)",
                origin(&s.url),
                after.as_secs()
            ))),
            Ok(Err(e)) => Err(egress_failure(&s.url, method, &e)),
            Ok(Ok(answer)) => Ok(answer),
        }
    }

    /// `r` with what every request of the session carries: the protocol
    /// version, the envelope's method and name, the session id and the
    /// connection's credential (marked sensitive).
    fn with_headers(
        &self,
        s: &Session<'_>,
        mut r: EgressRequest,
        method: &str,
        name: Option<&str>,
    ) -> Result<EgressRequest, McpFailure> {
        if let Some(v) = s.version {
            r = r.header(HeaderName::from_static("mcp-protocol-version"), HeaderValue::from_static(v));
        }
        if s.envelope && !method.is_empty() {
            if let Ok(m) = HeaderValue::from_str(method) {
                r = r.header(HeaderName::from_static("mcp-method"), m);
            }
            if let Some(n) = name.and_then(|n| HeaderValue::from_str(n).ok()) {
                r = r.header(HeaderName::from_static("mcp-name"), n);
            }
        }
        if let Some(sid) = &s.session_id {
            r = r.header(HeaderName::from_static("mcp-session-id"), sid.clone());
        }
        if let Some(secret) = &s.ep.secret {
            let bad = || McpFailure::Protocol("the connection's secret is not a valid header value".into());
            let text = secret.expose_str().map_err(|_| bad())?;
            let (name, value) = match &s.ep.auth_header {
                Some(h) => (HeaderName::from_bytes(h.as_bytes()).map_err(|_| bad())?, text.to_owned()),
                None => (HeaderName::from_static("authorization"), format!("Bearer {text}")),
            };
            let mut value = HeaderValue::from_str(&value).map_err(|_| bad())?;
            value.set_sensitive(true);
            r = r.header(name, value);
        }
        Ok(r)
    }
}

fn egress_failure(url: &Url, method: &str, e: &EgressError) -> McpFailure {
    let m = format!("{} gave no answer to {method}: {e}", origin(url));
    match e.kind() {
        EgressErrorKind::Timeout => McpFailure::Timeout(m),
        _ => McpFailure::Unreachable(m),
    }
}

/// The URL's scheme, host and port: what errors name (never a path or
/// query, where a key may hide).
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() { "an empty body".into() } else { format!("it began {}", LfError::excerpt(&line)) }
}

/// The JSON-RPC message answering `id` among the events of an SSE body.
fn from_events(body: &[u8], id: u64) -> Option<Value> {
    let text = String::from_utf8_lossy(body);
    let mut data = String::new();
    let mut found = None;
    for line in text.lines().chain(std::iter::once("")) {
        if let Some(d) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
        } else if line.is_empty() && !data.is_empty() {
            if let Ok(m) = serde_json::from_str::<Value>(&data)
                && m.get("id").and_then(Value::as_u64) == Some(id)
            {
                found = Some(m);
            }
            data.clear();
        }
    }
    found
}

fn listed_tool(t: &Value) -> Result<ListedTool, String> {
    let obj = |k: &str| t.get(k).and_then(Value::as_object).cloned().unwrap_or_else(Map::new);
    let name = t.get("name").and_then(Value::as_str).filter(|n| !n.is_empty() && n.len() <= 128);
    let Some(name) = name else {
        return Err("the server listed a tool without a name of 1 to 128 characters".into());
    };
    Ok(ListedTool {
        name: name.to_owned(),
        description: t
            .get("description")
            .and_then(Value::as_str)
            .map(|d| lf_core::clip(d, 4000).into_owned()),
        input_schema: obj("inputSchema"),
        annotations: obj("annotations"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_answer_by_id() {
        let body = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":3,\"result\":{}}\n\n";
        assert_eq!(from_events(body, 3), Some(json!({"jsonrpc": "2.0", "id": 3, "result": {}})));
        assert_eq!(from_events(body, 4), None);
    }

    #[test]
    fn errors_name_the_origin_only() {
        let url = Url::parse("https://u:p@mcp.example.com:8443/mcp?key=s3cret").unwrap();
        assert_eq!(origin(&url), "https://mcp.example.com:8443");
    }
}
