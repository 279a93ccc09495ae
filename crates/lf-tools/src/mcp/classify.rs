//! What an incoming message is, read once, for both transports; the scope
//! rule of a Lenser's token; and where a call's scope begins.
//!
//! A transport hands the server a message's bytes, its caller, and the
//! protocol version a plain tool call may be answered directly in (none
//! where no call is: on stdio before `initialize` is answered, over HTTP
//! with sessions, with dynamic toolsets, or with headers rmcp must read).
//! The answer ([`Classified`]) is one of:
//! - a call the transport answers itself ([`DirectCall`], see
//!   [`crate::mcp::direct`]);
//! - a message for rmcp, read as the transport needs it: rmcp's own message
//!   for a stdio line or an HTTP batch member ([`LfServer::classify`]),
//!   what the HTTP endpoint checks before rmcp reads the body itself
//!   ([`LfServer::classify_body`], [`Envelope`]);
//! - refused ([`Refusal`]): a caller whose token lacks the tool's scope, or
//!   a message rmcp does not read, with its JSON-RPC answer.
//!
//! A `tools/call` is read first, in one pass that reads exactly what rmcp
//! reads as a call (`classify/call.rs`): the call answered directly is parsed
//! once, and one rmcp answers reaches it on stdio as that same reading.
//! rmcp's own reading of a message tries every request kind in turn, and a
//! tool call comes late among them. Any other message is read once, as
//! the transport needs it (rmcp's message, or the JSON value whose facts
//! the HTTP endpoint checks); only a message that reading refuses is read
//! again, for its answer.

mod call;

use std::future::Future;

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, NumberOrString, ProtocolVersion, RequestId,
};
use serde_json::Value;

use lf_core::{Principal, Scope, clip};

use crate::LfServer;
use crate::mcp::direct::DirectCall;
use crate::mcp::jsonrpc;

use self::call::ToolCall;

/// What a message is (see the module's docs), with `M` what the transport
/// needs of a message for rmcp.
// A `Classified` lives for one message: boxing the large variant would
// give every message an allocation more.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Classified<M> {
    /// A plain tool call the transport answers itself.
    Direct(DirectCall),
    /// A message for rmcp.
    Rmcp(M),
    /// Not answered past the transport.
    Refused(Refusal),
}

impl<M> Classified<M> {
    fn map<N>(self, f: impl FnOnce(M) -> N) -> Classified<N> {
        match self {
            Classified::Direct(call) => Classified::Direct(call),
            Classified::Rmcp(message) => Classified::Rmcp(f(message)),
            Classified::Refused(refusal) => Classified::Refused(refusal),
        }
    }
}

/// Why a message goes no further than the transport.
#[derive(Debug, PartialEq)]
pub enum Refusal {
    /// The caller is a Lenser whose token lacks the scope `tool` needs
    /// (see `lacks_scope`). HTTP answers it 403 `insufficient_scope`.
    Scope {
        tool: String,
        /// The request's id; none for a notification.
        id: Option<Value>,
    },
    /// Not a message rmcp reads (not JSON, nested too deeply to parse, not
    /// a JSON-RPC message): the JSON-RPC error it is answered with, none
    /// for a notification, which nobody waits for.
    Unreadable(Option<Value>),
}

impl Refusal {
    /// The JSON-RPC error that answers it, if any: how a transport without
    /// an answer of its own to a scope refusal (every transport but HTTP,
    /// whose callers alone carry tokens) answers one.
    pub fn answer(&self) -> Option<Value> {
        match self {
            Refusal::Scope { tool, id } => Some(jsonrpc::error(
                id.clone()?,
                -32600,
                format!(
                    "Invalid Request: {tool} needs the write scope, which this token lacks: sign in again granting it"
                ),
            )),
            Refusal::Unreadable(answer) => answer.clone(),
        }
    }
}

/// What the HTTP endpoint checks of a message before rmcp reads its body:
/// whether it is `initialize`, and the id of a request, for the check that
/// refuses an id already in flight in a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    initialize: bool,
    request_id: Option<Value>,
}

impl Envelope {
    /// Whether the message is an `initialize`.
    pub fn initialize(&self) -> bool {
        self.initialize
    }

    /// The id of a request (a message with a method and an id).
    pub fn request_id(&self) -> Option<&Value> {
        self.request_id.as_ref()
    }

    /// What the endpoint checks of `message`, a message rmcp reads.
    pub fn of(message: &ClientJsonRpcMessage) -> Self {
        match message {
            JsonRpcMessage::Request(request) => Envelope {
                initialize: request.request.method() == "initialize",
                request_id: Some(id_value(&request.id)),
            },
            JsonRpcMessage::Notification(JsonRpcNotification {
                notification: ClientNotification::CustomNotification(custom),
                ..
            }) => Envelope { initialize: custom.method == "initialize", request_id: None },
            _ => Envelope { initialize: false, request_id: None },
        }
    }

    /// What the endpoint checks of a JSON value rmcp will read as it can.
    fn of_value(message: &Value) -> Self {
        Envelope {
            initialize: message.get("method").and_then(Value::as_str) == Some("initialize"),
            request_id: message.get("method").and(message.get("id")).cloned(),
        }
    }
}

/// A request id as JSON.
fn id_value(id: &RequestId) -> Value {
    match id {
        NumberOrString::Number(n) => Value::from(*n),
        NumberOrString::String(s) => Value::from(&**s),
    }
}

impl LfServer {
    /// What `text` is, as a stdio line or an HTTP batch member: a call to
    /// answer directly in protocol `version` (see the module's docs), rmcp's
    /// message, or refused: `caller`'s token lacks the scope of the tool it
    /// names, or rmcp does not read it (its answer is
    /// [`jsonrpc::reject`]'s).
    pub fn classify(
        &self,
        text: &[u8],
        caller: &Principal,
        version: Option<&ProtocolVersion>,
    ) -> Classified<ClientJsonRpcMessage> {
        if let Some(classified) = self.read_call(text, caller, version) {
            return classified.map(ToolCall::into_message);
        }
        match serde_json::from_slice::<ClientJsonRpcMessage>(text) {
            Ok(message) => {
                match self.scope_refusal(caller, message_tool(&message), || message_id(&message)) {
                    Some(refusal) => Classified::Refused(refusal),
                    None => Classified::Rmcp(message),
                }
            }
            Err(err) => {
                tracing::debug!(error = %err, "unreadable message");
                let value = serde_json::from_slice::<Value>(text);
                if let Ok(value) = &value
                    && let Some(refusal) = self.scope_refusal(caller, tool_called(value), || value_id(value))
                {
                    return Classified::Refused(refusal);
                }
                Classified::Refused(Refusal::Unreadable(jsonrpc::reject_read(text, value, &err)))
            }
        }
    }

    /// What `text` is, as an HTTP request body, which rmcp reads again
    /// itself and answers as it can: a call to answer directly in protocol
    /// `version`, the facts the endpoint checks, or refused: `caller`'s
    /// token lacks the scope of the tool it names, or it is not JSON (a
    /// parse error; a message nested too deeply, answered with its own id).
    ///
    /// Without a `version` the body is read as JSON alone: the id the
    /// endpoint keeps in flight is the id as the client wrote it.
    pub fn classify_body(
        &self,
        text: &[u8],
        caller: &Principal,
        version: Option<&ProtocolVersion>,
    ) -> Classified<Envelope> {
        if version.is_some()
            && let Some(classified) = self.read_call(text, caller, version)
        {
            return classified
                .map(|call| Envelope { initialize: false, request_id: Some(id_value(&call.id)) });
        }
        match serde_json::from_slice::<Value>(text) {
            Ok(value) => match self.scope_refusal(caller, tool_called(&value), || value_id(&value)) {
                Some(refusal) => Classified::Refused(refusal),
                None => Classified::Rmcp(Envelope::of_value(&value)),
            },
            Err(err) => {
                let answer = jsonrpc::is_too_deep(&err).then(|| jsonrpc::too_deep(text)).flatten();
                Classified::Refused(Refusal::Unreadable(Some(answer.unwrap_or_else(|| {
                    jsonrpc::error(
                        Value::Null,
                        -32700,
                        format!("Parse error: {}", clip(&err.to_string(), 200)),
                    )
                }))))
            }
        }
    }

    /// `text` read as a `tools/call`, when it is one rmcp reads: to answer
    /// directly when the transport may in `version`, its `_meta` names no
    /// protocol version (rmcp checks such a call against that version) and
    /// the server answers the tool directly; refused when `caller` may not
    /// call the tool. `None` when it is not such a call.
    fn read_call(
        &self,
        text: &[u8],
        caller: &Principal,
        version: Option<&ProtocolVersion>,
    ) -> Option<Classified<ToolCall>> {
        let call = ToolCall::parse(text)?;
        let name = call.params.name.as_ref();
        if let Some(refusal) = self.scope_refusal(caller, Some(name), || Some(id_value(&call.id))) {
            return Some(Classified::Refused(refusal));
        }
        Some(match version {
            Some(version) if !call.names_protocol_version() && self.answers_directly(name) => {
                let traceparent = call.traceparent();
                let ToolCall { id, params, .. } = call;
                Classified::Direct(DirectCall::new(id, params, version.clone()).continuing(traceparent))
            }
            _ => Classified::Rmcp(call),
        })
    }

    /// The refusal of a message naming `tool` (see [`tool_called`]) from
    /// `caller`, when its token lacks the scope the tool needs on this
    /// server; none for a tool the server does not offer (the call answers
    /// that it is unknown). `id` gives the message's id.
    fn scope_refusal(
        &self,
        caller: &Principal,
        tool: Option<&str>,
        id: impl FnOnce() -> Option<Value>,
    ) -> Option<Refusal> {
        // The Service principal of stdio has no token: no look-up.
        if !matches!(caller, Principal::Lenser { .. }) {
            return None;
        }
        let tool = tool?;
        lacks_scope(caller, self.required_scope(tool)?)
            .then(|| Refusal::Scope { tool: tool.to_owned(), id: id() })
    }
}

/// The scope rule, decided here only: whether `principal` is a Lenser
/// whose token lacks `needed` ([`crate::ToolSpec::required_scope`] of a
/// tool: `write` for every tool that is not a Read tool). A Service or an
/// Agent principal carries no token.
pub(crate) fn lacks_scope(principal: &Principal, needed: Scope) -> bool {
    matches!(principal, Principal::Lenser { scopes, .. } if !scopes.allows(needed))
}

/// `call` run as one call ([`lf_core::call`]): its reads may share what the
/// first of them checked. The one place a call's scope begins: the catalog
/// runs each tool call in one (whichever path brought it: the direct path,
/// rmcp's `call_tool`, [`LfServer::call_as`]), and the HTTP endpoint runs
/// each request in one, so that the check of its token is part of the
/// call. A call run within another joins the outer one's scope, so a
/// request over HTTP is one call whatever it runs.
pub fn one_call<F: Future>(call: F) -> lf_core::call::Within<F> {
    lf_core::call::within(call)
}

/// The tool a `tools/call` message names (its `params.name`, when that is
/// a string), whether or not rmcp reads the message.
fn tool_called(message: &Value) -> Option<&str> {
    (message.get("method")?.as_str()? == "tools/call").then_some(())?;
    message.get("params")?.get("name")?.as_str()
}

/// The id of a message read as JSON, when it is a string or a number.
fn value_id(message: &Value) -> Option<Value> {
    message.get("id").filter(|id| id.is_string() || id.is_number()).cloned()
}

/// The tool `message` names, as [`tool_called`] finds it in its JSON.
fn message_tool(message: &ClientJsonRpcMessage) -> Option<&str> {
    let (method, params) = match message {
        JsonRpcMessage::Request(JsonRpcRequest { request: ClientRequest::CallToolRequest(call), .. }) => {
            return Some(call.params.name.as_ref());
        }
        JsonRpcMessage::Request(JsonRpcRequest { request: ClientRequest::CustomRequest(custom), .. }) => {
            (&custom.method, &custom.params)
        }
        JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ClientNotification::CustomNotification(custom),
            ..
        }) => (&custom.method, &custom.params),
        _ => return None,
    };
    (method == "tools/call").then_some(())?;
    params.as_ref()?.get("name")?.as_str()
}

/// The id of `message`, when it is a request.
fn message_id(message: &ClientJsonRpcMessage) -> Option<Value> {
    match message {
        JsonRpcMessage::Request(request) => Some(id_value(&request.id)),
        _ => None,
    }
}
