//! A plain `tools/call` answered without rmcp's per-request machinery.
//!
//! rmcp serves each request through a service loop: a cancellation token, a
//! request context, a spawned task and channel hops on stdio; on stateless
//! HTTP a whole one-shot service per request. For a tool call that work cost
//! more than the call. Both transports therefore answer the one message
//! kind that is most of their traffic themselves, where rmcp's answer is
//! known: [`LfServer::classify`] decides, from the request's text and the
//! session's negotiated protocol version, whether a message is such a call
//! ([`crate::mcp::classify`], which reads a call as rmcp reads it), and
//! [`LfServer::answer`] gives the answer rmcp's handler gives, shaped for
//! that version as rmcp shapes it. Everything else stays rmcp's.
//!
//! This module, the reading of a call in [`crate::mcp::classify`], the
//! transports' `direct` modules (lf-mcp-stdio's `transport/direct.rs`,
//! lf-mcp-http's `mcp/direct.rs`) and their parity tests (the direct
//! answer equals rmcp's) are the whole bypass: an rmcp upgrade is checked
//! by running those tests.

use std::sync::LazyLock;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, ErrorData, JsonObject,
    JsonRpcMessage, JsonRpcResponse, ProtocolVersion, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde_json::Value;
use tracing::Instrument;

use lf_core::Principal;

use crate::LfServer;
use crate::catalog::output::{ToolOutput, call_tool_result, write_json_string};
use crate::mcp::trace;

/// A tool call to answer directly, with the protocol version to answer it
/// in: made by [`LfServer::classify`] (or [`LfServer::classify_body`]),
/// answered by [`LfServer::answer`].
#[derive(Debug)]
pub struct DirectCall {
    id: RequestId,
    name: String,
    arguments: Option<JsonObject>,
    version: ProtocolVersion,
    /// The `traceparent` of its `_meta`, when spans are exported.
    traceparent: Option<String>,
}

impl DirectCall {
    pub(crate) fn new(id: RequestId, params: CallToolRequestParams, version: ProtocolVersion) -> Self {
        Self { id, name: params.name.into_owned(), arguments: params.arguments, version, traceparent: None }
    }

    /// The call, continuing the trace `traceparent` names.
    pub(crate) fn continuing(self, traceparent: Option<String>) -> Self {
        Self { traceparent, ..self }
    }

    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The tool it names.
    pub fn tool(&self) -> &str {
        &self.name
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
    /// The answer rmcp's handler gives `call` from `principal`: the catalog's
    /// result, shaped for the call's protocol version as rmcp's
    /// `handle_request` shapes every result.
    pub async fn answer(&self, principal: Principal, call: DirectCall) -> Answer {
        let DirectCall { id, name, arguments, version, traceparent } = call;
        let inline_era = is_inline_era(&version);
        let span = trace::tool_call(&name, traceparent.as_deref());
        let called = self.call_as(principal, &name, arguments.unwrap_or_default()).instrument(span).await;
        let body = match called {
            Ok(output) => Body::Tool { output, inline_era },
            Err(mut error) => {
                if inline_era && error.code == ErrorCode::RESOURCE_NOT_FOUND {
                    error.code = ErrorCode::INVALID_PARAMS;
                }
                Body::Error(error)
            }
        };
        Answer { id, body }
    }
}

/// `result` shaped for a peer of the inline era or not, as rmcp's
/// `handle_request` shapes every result.
fn shaped(result: CallToolResult, inline_era: bool) -> ServerResult {
    let mut result = ServerResult::from(CallToolResponse::from(result));
    if inline_era {
        result.fill_missing_cache_hints();
    } else {
        result.strip_result_type_for_legacy_peer();
        result.strip_non_object_output_for_legacy_peer();
    }
    result
}

/// A field's value while an answer is written (see [`Answer::write`]),
/// found again as serde_json writes the field with it. A JSON string holds
/// a quote only escaped, so `"field":` matches only the field itself.
struct StandIn {
    field: &'static str,
    value: Value,
    /// Finds `"field":value` as serde_json writes it.
    written: memchr::memmem::Finder<'static>,
}

impl StandIn {
    fn new(field: &'static str, value: Value) -> Self {
        let written = serde_json::json!({ field: value }).to_string();
        // Without the braces of the object.
        let written = memchr::memmem::Finder::new(&written[1..written.len() - 1]).into_owned();
        Self { field, value, written }
    }

    /// The stand-in of a text block.
    fn text(&self) -> String {
        self.value.as_str().unwrap_or_default().to_owned()
    }

    /// Where the field's value is in `json`, after `from`.
    fn find(&self, json: &[u8], from: usize) -> Option<std::ops::Range<usize>> {
        let at = from + self.written.find(&json[from..])?;
        // Past `"field":`.
        Some(at + self.field.len() + 3..at + self.written.needle().len())
    }
}

/// The text block's stand-in: a text no string of an answer holds.
static TEXT: LazyLock<StandIn> = LazyLock::new(|| StandIn::new("text", Value::from("\u{0}text\u{0}")));
/// The structured content's: an object, as the content it stands for is, so
/// that rmcp's shaping keeps it; an empty one, which allocates nothing.
static STRUCTURED: LazyLock<StandIn> =
    LazyLock::new(|| StandIn::new("structuredContent", Value::Object(Default::default())));

/// The answer to a [`DirectCall`], as [`LfServer::answer`] gives it.
#[derive(Debug)]
pub struct Answer {
    id: RequestId,
    body: Body,
}

#[derive(Debug, Clone)]
enum Body {
    Tool { output: ToolOutput, inline_era: bool },
    Error(ErrorData),
}

impl Answer {
    /// The id of the call it answers.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The message rmcp would send, as rmcp's handler shapes it.
    fn into_message(self) -> ServerJsonRpcMessage {
        match self.body {
            Body::Tool { output, inline_era } => {
                ServerJsonRpcMessage::response(shaped(output.into(), inline_era), self.id)
            }
            Body::Error(error) => ServerJsonRpcMessage::error(error, Some(self.id)),
        }
    }

    /// Appends the answer to `out` as JSON, byte for byte what serde_json
    /// writes for rmcp's message, with a tool result's JSON written once:
    /// a [`ToolOutput`]'s text is its structured content's JSON, so the
    /// message is written with stand-ins for both, and the text is put in
    /// for the one (escaped as a string in one pass that copies everything
    /// between its quotes and backslashes) and copied for the other.
    pub fn write(self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let (output, inline_era) = match self.body {
            // Shaping for a legacy peer drops structured content that is not
            // an object; the stand-in is one: written the usual way.
            Body::Tool { output, inline_era } if inline_era || output.value().is_object() => {
                (output, inline_era)
            }
            _ => return serde_json::to_writer(out, &self.into_message()),
        };
        let (text, note, is_error) = output.into_text();
        let stand_ins = call_tool_result(TEXT.text(), STRUCTURED.value.clone(), note, is_error);
        let mut message = ServerJsonRpcMessage::response(shaped(stand_ins, inline_era), self.id);
        let start = out.len();
        serde_json::to_writer(&mut *out, &message)?;
        let skeleton = out.split_off(start);
        let text_at = TEXT.find(&skeleton, 0);
        let structured_at = text_at.as_ref().and_then(|t| STRUCTURED.find(&skeleton, t.end));
        let (Some(text_at), Some(structured_at)) = (text_at, structured_at) else {
            // Not written as expected: written again the usual way.
            if let Some(result) = tool_result(&mut message) {
                result.structured_content = Some(serde_json::from_str(&text)?);
                if let Some(ContentBlock::Text(block)) = result.content.first_mut() {
                    block.text = text;
                }
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
    use super::*;

    /// An answer written with its structured content copied from its text
    /// is byte for byte the message rmcp's handler sends, in both eras:
    /// results with and without a note, errors, tricky text, and results
    /// whose structured content is not an object (which a legacy peer gets
    /// without it).
    #[test]
    fn parity_answers_are_written_as_serde_json_writes_them() {
        let tricky = serde_json::json!({
            "structuredContent": {},
            "text": "\u{0}text\u{0}",
            "control": "line\nbreak\ttab\u{1}",
            "quote": "a \"b\" \\ c \u{1F600}",
            "nested": {"list": [1, 2.5, null, true, "é"]},
        });
        let values = [
            serde_json::json!({"lens": {"id": "x", "title": "T"}}),
            tricky,
            serde_json::json!({"path": "C:\\dir\\\"x\"", "empty": ""}),
            serde_json::json!({}),
            serde_json::json!(["not", "an", "object"]),
            serde_json::json!("text"),
        ];
        let mut answers = Vec::new();
        for (i, value) in values.into_iter().enumerate() {
            for output in [
                ToolOutput::success(value.clone()),
                ToolOutput::error(value.clone()),
                ToolOutput::success(value.clone()).with_note("a \"note\"".into()),
            ] {
                for inline_era in [false, true] {
                    for id in [RequestId::Number(i as i64), RequestId::String("s\"".into())] {
                        answers.push(Answer { id, body: Body::Tool { output: output.clone(), inline_era } });
                    }
                }
            }
        }
        answers.push(Answer {
            id: RequestId::Number(9),
            body: Body::Error(ErrorData::invalid_params("no such tool", None)),
        });
        for answer in answers {
            let expected = serde_json::to_vec(
                &Answer { id: answer.id.clone(), body: answer.body.clone() }.into_message(),
            )
            .unwrap();
            let mut out = b"before\n".to_vec();
            answer.write(&mut out).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out[7..]),
                String::from_utf8_lossy(&expected),
                "written after what the buffer held"
            );
            assert_eq!(&out[..7], b"before\n");
        }
    }

    /// The message is rmcp's: a legacy peer gets no `resultType`, and no
    /// structured content that is not an object (the text still has it).
    #[test]
    fn parity_answers_are_shaped_for_the_era() {
        let answer = |value: Value, inline_era| {
            let answer = Answer {
                id: RequestId::Number(1),
                body: Body::Tool { output: ToolOutput::success(value), inline_era },
            };
            let mut out = Vec::new();
            answer.write(&mut out).unwrap();
            serde_json::from_slice::<Value>(&out).unwrap()
        };
        let legacy = answer(serde_json::json!({"a": 1}), false);
        assert_eq!(
            legacy["result"],
            serde_json::json!({"content": [{"type": "text", "text": "{\"a\":1}"}], "structuredContent": {"a": 1}, "isError": false})
        );
        assert_eq!(answer(serde_json::json!({"a": 1}), true)["result"]["resultType"], "complete");
        let list = answer(serde_json::json!([1]), false);
        assert!(list["result"].get("structuredContent").is_none(), "{list}");
        assert_eq!(list["result"]["content"][0]["text"], "[1]");
    }
}
