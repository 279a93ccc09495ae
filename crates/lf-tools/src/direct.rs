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

use std::sync::LazyLock;

use rmcp::model::{
    CallToolRequestMethod, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, InputResponses,
    JsonObject, JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, ProtocolVersion, RequestId,
    RequestMetaObject, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;
use serde_json::Value;

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
    pub async fn answer(&self, principal: Principal, call: ToolCall, version: &ProtocolVersion) -> Answer {
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
                Answer(ServerJsonRpcMessage::response(result, id))
            }
            Err(mut error) => {
                if inline_era && error.code == ErrorCode::RESOURCE_NOT_FOUND {
                    error.code = ErrorCode::INVALID_PARAMS;
                }
                Answer(ServerJsonRpcMessage::error(error, Some(id)))
            }
        }
    }
}

/// A field's value while the answer is written (see [`Answer::write`]),
/// found again as serde_json writes the field with it. No JSON string can
/// hold that text unescaped, so only the field itself matches.
struct StandIn {
    field: &'static str,
    value: &'static str,
    /// Finds `"field":"value"` as serde_json writes it.
    written: LazyLock<memchr::memmem::Finder<'static>>,
}

impl StandIn {
    fn finder(&self) -> memchr::memmem::Finder<'static> {
        let written = serde_json::json!({ self.field: self.value }).to_string();
        // Without the braces of the object.
        memchr::memmem::Finder::new(&written[1..written.len() - 1]).into_owned()
    }

    /// Where the field's value is in `json`, after `from`.
    fn find(&self, json: &[u8], from: usize) -> Option<std::ops::Range<usize>> {
        let at = from + self.written.find(&json[from..])?;
        // Past `"field":`.
        Some(at + self.field.len() + 3..at + self.written.needle().len())
    }
}

static TEXT: StandIn =
    StandIn { field: "text", value: "\u{0}text\u{0}", written: LazyLock::new(|| TEXT.finder()) };
static STRUCTURED: StandIn = StandIn {
    field: "structuredContent",
    value: "\u{0}structured\u{0}",
    written: LazyLock::new(|| STRUCTURED.finder()),
};

/// The answer to a [`ToolCall`], as [`LfServer::answer`] gives it.
#[derive(Debug)]
pub struct Answer(ServerJsonRpcMessage);

impl Answer {
    /// Appends the answer to `out` as JSON, byte for byte what serde_json
    /// writes for its message, with a tool result's JSON written once: its
    /// first text block is the structured content as JSON text (every result
    /// of the catalog has it there, as MCP asks: [`LfServer::call_as`], and
    /// only `answer` makes an `Answer`), so `structuredContent` is a copy of
    /// that text, and the text is escaped as a string in one pass that
    /// copies everything between its quotes and backslashes.
    pub fn write(self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let mut message = self.0;
        let Some(result) = tool_result(&mut message) else {
            return serde_json::to_writer(out, &message);
        };
        let (Some(ContentBlock::Text(block)), Some(value)) =
            (result.content.first_mut(), result.structured_content.as_mut())
        else {
            return serde_json::to_writer(out, &message);
        };
        debug_assert_eq!(block.text, value.to_string(), "the first text block is the structured content");
        let text = std::mem::replace(&mut block.text, TEXT.value.to_owned());
        let value = std::mem::replace(value, Value::String(STRUCTURED.value.to_owned()));
        let start = out.len();
        serde_json::to_writer(&mut *out, &message)?;
        let skeleton = out.split_off(start);
        let text_at = TEXT.find(&skeleton, 0);
        let structured_at = text_at.as_ref().and_then(|t| STRUCTURED.find(&skeleton, t.end));
        let (Some(text_at), Some(structured_at)) = (text_at, structured_at) else {
            // Not written as expected: written again the usual way.
            if let Some(result) = tool_result(&mut message) {
                if let Some(ContentBlock::Text(block)) = result.content.first_mut() {
                    block.text = text;
                }
                result.structured_content = Some(value);
            }
            return serde_json::to_writer(out, &message);
        };
        out.reserve(skeleton.len() + 2 * text.len() + text.len() / 4);
        out.extend_from_slice(&skeleton[..text_at.start]);
        write_json_string(out, &text)?;
        out.extend_from_slice(&skeleton[text_at.end..structured_at.start]);
        out.extend_from_slice(text.as_bytes());
        out.extend_from_slice(&skeleton[structured_at.end..]);
        Ok(())
    }
}

/// Appends `text` to `out` as a JSON string, as serde_json writes it.
fn write_json_string(out: &mut Vec<u8>, text: &str) -> serde_json::Result<()> {
    let bytes = text.as_bytes();
    // Control characters have escapes of their own: serde_json writes those.
    if bytes.iter().fold(false, |control, b| control | (*b < 0x20)) {
        return serde_json::to_writer(out, text);
    }
    out.push(b'"');
    let mut from = 0;
    for at in memchr::memchr2_iter(b'"', b'\\', bytes) {
        out.extend_from_slice(&bytes[from..at]);
        out.push(b'\\');
        // The quote or backslash itself starts the next run.
        from = at;
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
    Ok(())
}

/// The tool result `message` answers with, if it is one.
fn tool_result(message: &mut ServerJsonRpcMessage) -> Option<&mut CallToolResult> {
    match message {
        JsonRpcMessage::Response(JsonRpcResponse {
            result: ServerResult::CallToolResult(result), ..
        }) => Some(result),
        _ => None,
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
    fn parity_tool_calls_read_as_rmcp_reads_them() {
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

    /// An answer written with its structured content copied from its text
    /// is byte for byte the answer serde_json writes.
    #[test]
    fn parity_answers_are_written_as_serde_json_writes_them() {
        let tricky = serde_json::json!({
            "structuredContent": STRUCTURED.value,
            "text": TEXT.value,
            "control": "line\nbreak\ttab\u{1}",
            "quote": "a \"b\" \\ c \u{1F600}",
            "nested": {"list": [1, 2.5, null, true, "é"]},
        });
        let results = [
            crate::server::structured(serde_json::json!({"lens": {"id": "x", "title": "T"}})),
            crate::server::structured(tricky.clone()),
            crate::server::structured(serde_json::json!({"path": "C:\\dir\\\"x\"", "empty": ""})),
            crate::server::structured(serde_json::json!({})),
            CallToolResult::structured_error(serde_json::json!({"error": {"code": "NOT_FOUND"}})),
            CallToolResult::success(vec![ContentBlock::text("plain text")]),
            // No text block: written the usual way.
            {
                let mut r = crate::server::structured(tricky);
                r.content.clear();
                r
            },
        ];
        let with_note = |mut r: CallToolResult| {
            if !r.content.is_empty() {
                r.content.push(ContentBlock::text("a note"));
            }
            r
        };
        let mut messages: Vec<ServerJsonRpcMessage> = results
            .into_iter()
            .enumerate()
            .flat_map(|(i, r)| {
                let note = with_note(r.clone());
                [
                    ServerJsonRpcMessage::response(
                        ServerResult::CallToolResult(r),
                        RequestId::Number(i as i64),
                    ),
                    ServerJsonRpcMessage::response(
                        ServerResult::CallToolResult(note),
                        RequestId::String("s".into()),
                    ),
                ]
            })
            .collect();
        messages.push(ServerJsonRpcMessage::error(
            rmcp::model::ErrorData::invalid_params("no such tool", None),
            Some(RequestId::Number(9)),
        ));
        for message in messages {
            let expected = serde_json::to_vec(&message).unwrap();
            let mut out = b"before\n".to_vec();
            Answer(message).write(&mut out).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out[7..]),
                String::from_utf8_lossy(&expected),
                "written after what the buffer held"
            );
            assert_eq!(&out[..7], b"before\n");
        }
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        for text in [
            "",
            "plain",
            "\"",
            "\\",
            "a\"b\\c\"",
            "\"\"\\\\",
            "line\nbreak",
            "\u{1}\u{1f}",
            "é 😀 \u{7f} /",
            "end\\",
        ] {
            let mut out = Vec::new();
            write_json_string(&mut out, text).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(text).unwrap(), "{text:?}");
        }
    }
}
