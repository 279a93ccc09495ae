//! A plain `tools/call` answered without rmcp's per-request machinery.
//!
//! rmcp serves each request through a service loop: a cancellation token, a
//! request context, a spawned task and channel hops on stdio; on stateless
//! HTTP a whole one-shot service per request. For a tool call that work cost
//! more than the call. Both transports therefore answer the one message
//! kind that is most of their traffic themselves, in the cases where rmcp's
//! answer is known: a [`ToolCall`] whose `_meta` names no protocol version,
//! in a session whose version the transport knows (stdio: the one rmcp
//! negotiated; HTTP: the `MCP-Protocol-Version` header). Everything else
//! stays rmcp's. [`LfServer::answer`] gives the answer rmcp's handler gives,
//! shaped for the session's version as rmcp shapes it; the transports' tests
//! check the two paths answer alike.

use rmcp::model::{
    CallToolRequestMethod, CallToolResponse, ErrorCode, InputResponses, JsonObject, JsonRpcVersion2_0,
    ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;

use lf_core::Principal;

use crate::LfServer;

/// A `tools/call` request read straight from its text. rmcp reads the same
/// line through two layers of buffered (flattened) fields; this reads the
/// same fields with the same types, so a message this reads rmcp reads as
/// the same call, and one it does not read is left to rmcp.
#[derive(Debug, Deserialize)]
pub struct ToolCall {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(rename = "method")]
    _method: CallToolRequestMethod,
    params: ToolCallParams,
}

#[derive(Debug, Deserialize)]
struct ToolCallParams {
    #[serde(rename = "_meta")]
    meta: Option<RequestMetaObject>,
    name: String,
    arguments: Option<JsonObject>,
    // Read so that a call rmcp would refuse for them is left to rmcp; the
    // catalog's handler does not use them.
    #[serde(rename = "inputResponses")]
    _input_responses: Option<InputResponses>,
    #[serde(rename = "requestState")]
    _request_state: Option<String>,
}

impl ToolCall {
    /// Reads `text` as a tool call, if it is one.
    pub fn parse(text: &[u8]) -> Option<Self> {
        serde_json::from_slice(text).ok()
    }

    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The tool it names.
    pub fn tool(&self) -> &str {
        &self.params.name
    }

    /// Whether its `_meta` names a protocol version. rmcp checks such a call
    /// against the versions it supports and the inline era's required
    /// metadata: it is not one to answer directly.
    pub fn names_protocol_version(&self) -> bool {
        self.params.meta.as_ref().is_some_and(|meta| meta.protocol_version().is_some())
    }
}

/// Whether `version` is of the inline era (2026-07-28 and later).
pub fn is_inline_era(version: &ProtocolVersion) -> bool {
    *version >= ProtocolVersion::V_2026_07_28
}

/// The protocol version rmcp knows by `name`, if any: its own static value,
/// which clones without copying the name.
pub fn known_version(name: &str) -> Option<ProtocolVersion> {
    ProtocolVersion::KNOWN_VERSIONS.iter().find(|known| known.as_str() == name).cloned()
}

impl LfServer {
    /// The answer rmcp's handler gives `call` from `principal` in a session of
    /// protocol `version`: the catalog's result, shaped for that version as
    /// rmcp's `handle_request` shapes every result.
    pub async fn answer(
        &self,
        principal: Principal,
        call: ToolCall,
        version: &ProtocolVersion,
    ) -> ServerJsonRpcMessage {
        let ToolCall { id, params, .. } = call;
        let inline_era = is_inline_era(version);
        match self.call_as(principal, &params.name, params.arguments.unwrap_or_default()).await {
            Ok(result) => {
                let mut result = ServerResult::from(CallToolResponse::from(result));
                if inline_era {
                    result.fill_missing_cache_hints();
                } else {
                    result.strip_result_type_for_legacy_peer();
                    result.strip_non_object_output_for_legacy_peer();
                }
                ServerJsonRpcMessage::response(result, id)
            }
            Err(mut error) => {
                if inline_era && error.code == ErrorCode::RESOURCE_NOT_FOUND {
                    error.code = ErrorCode::INVALID_PARAMS;
                }
                ServerJsonRpcMessage::error(error, Some(id))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetExtensions, JsonRpcRequest};

    use super::*;

    /// A tool call read here is the call rmcp reads, with the same id, name,
    /// arguments and `_meta`; a line rmcp does not read as a tool call is
    /// not read here either.
    #[test]
    fn tool_calls_read_as_rmcp_reads_them() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_lens","arguments":{"lens_id":"x","n":1.5}}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"n","_meta":{"progressToken":1}},"extra":true}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"n","_meta":null,"arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"n","requestState":"s","inputResponses":{"k":{}}}}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"n","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            // Not tool calls, or broken ones.
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"n","_meta":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"n","requestState":3}}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"n","inputResponses":[]}}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"n","arguments":[1]}}"#,
            r#"{"jsonrpc":"1.0","id":11,"method":"tools/call","params":{"name":"n"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"n"}}"#,
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"name":"n"}}"#,
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"n"}}"#,
            r#"[{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"n"}}]"#,
        ];
        let mut read = 0;
        for line in lines {
            let ours = ToolCall::parse(line.as_bytes());
            let rmcps = match serde_json::from_str::<ClientJsonRpcMessage>(line) {
                Ok(ClientJsonRpcMessage::Request(JsonRpcRequest {
                    id,
                    request: ClientRequest::CallToolRequest(call),
                    ..
                })) => Some((id, call)),
                _ => None,
            };
            match (ours, rmcps) {
                (None, None) => {}
                (Some(ours), Some((id, call))) => {
                    read += 1;
                    assert_eq!(ours.id, id, "{line}");
                    assert_eq!(ours.params.name, call.params.name, "{line}");
                    assert_eq!(ours.params.arguments, call.params.arguments, "{line}");
                    let meta = call.extensions().get::<RequestMetaObject>().cloned().unwrap_or_default();
                    assert_eq!(ours.params.meta.unwrap_or_default(), meta, "{line}");
                }
                (ours, rmcps) => {
                    panic!("{line}: read here {}, by rmcp {}", ours.is_some(), rmcps.is_some())
                }
            }
        }
        assert_eq!(read, 5);
        let inline = ToolCall::parse(lines[4].as_bytes()).unwrap();
        assert!(inline.names_protocol_version());
        assert!(!ToolCall::parse(lines[1].as_bytes()).unwrap().names_protocol_version());
    }
}
