//! [`ToolOutput`]: what a tool call answers, before a transport writes it.

use lf_core::{LfError, LfResult};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// A tool's result: its structured content, the same JSON as text (MCP asks
/// a tool that returns structured content to return it as text too), an
/// optional note for the reader after it, and whether it is an error.
///
/// Only lf-tools makes one, and only from the value, so the text is always
/// the value's JSON: the direct path writes that text for both and never
/// serializes the value ([`crate::mcp::direct::Answer::write`]); rmcp's path gets
/// the same result as a [`CallToolResult`] (`From`), whose first content
/// block is the text and whose note, if any, is the second.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    value: Value,
    text: String,
    note: Option<String>,
    is_error: bool,
}

impl ToolOutput {
    /// A result that is not an error.
    pub(crate) fn success(value: Value) -> Self {
        Self::new(value, false)
    }

    /// A result with `isError: true`.
    pub(crate) fn error(value: Value) -> Self {
        Self::new(value, true)
    }

    fn new(value: Value, is_error: bool) -> Self {
        // Not `Value`'s `Display` (what `CallToolResult::structured` uses):
        // the same text, but written through `fmt`, a call per fragment,
        // which showed in the stdio profile.
        let text = serde_json::to_string(&value).unwrap_or_else(|_| value.to_string());
        Self { value, text, note: None, is_error }
    }

    /// A result of third-party content (a tool's, or a run's for a task):
    /// `value` with its text cleaned ([`crate::catalog::hygiene`]), and a note when it
    /// reads like instructions to an AI. `tool` names it in the log.
    pub(crate) fn cleaned(tool: &str, mut value: Value, is_error: bool) -> Self {
        let reasons = crate::catalog::hygiene::clean_value(&mut value);
        let output = Self::new(value, is_error);
        if reasons.is_empty() {
            return output;
        }
        tracing::warn!(tool, reasons = ?reasons, "result flagged as possible prompt injection");
        output.with_note(crate::catalog::hygiene::injection_note(&reasons))
    }

    /// `self` as the `result` of an object whose other members are
    /// `fields`, in that order after it: the answer of a tool that runs
    /// another (`run_agent_action`). `self` is already cleaned and written;
    /// its text goes in as it is and its note stays. The fields are strings
    /// the server made (ids, tool names, action words), with nothing to
    /// clean.
    pub(crate) fn enveloped(self, fields: &[(&str, &str)]) -> LfResult<Self> {
        let Self { value, text, note, is_error } = self;
        let mut wrapped = Vec::with_capacity(text.len() + 160);
        wrapped.extend_from_slice(b"{\"result\":");
        wrapped.extend_from_slice(text.as_bytes());
        let mut map = serde_json::Map::with_capacity(1 + fields.len());
        map.insert("result".into(), value);
        for &(key, field) in fields {
            for (lead, s) in [(b',', key), (b':', field)] {
                wrapped.push(lead);
                write_json_string(&mut wrapped, s).map_err(LfError::internal)?;
            }
            map.insert(key.into(), Value::String(field.to_owned()));
        }
        wrapped.push(b'}');
        let text = String::from_utf8(wrapped).map_err(LfError::internal)?;
        Ok(Self { value: Value::Object(map), text, note, is_error })
    }

    /// The same result with `note` after its JSON.
    pub(crate) fn with_note(self, note: String) -> Self {
        Self { note: Some(note), ..self }
    }

    /// The structured content.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The structured content as JSON text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The note that follows the JSON, if any.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// The structured content, taken out.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// What a model reads of it: the JSON text, then the note, if any, on
    /// a paragraph of its own.
    pub fn into_model_text(self) -> String {
        match self.note {
            None => self.text,
            Some(note) => format!("{}\n\n{note}", self.text),
        }
    }

    /// The text, the note and whether it is an error, without the value:
    /// what a writer that writes the text for both needs.
    pub(crate) fn into_text(self) -> (String, Option<String>, bool) {
        (self.text, self.note, self.is_error)
    }
}

/// Appends `text` to `out` as a JSON string, as serde_json writes it.
pub(crate) fn write_json_string(out: &mut Vec<u8>, text: &str) -> serde_json::Result<()> {
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

/// A result serializes as its structured content.
impl serde::Serialize for ToolOutput {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

/// A result's content blocks: the JSON text, then the note.
pub(crate) fn call_tool_result(
    text: String,
    structured: Value,
    note: Option<String>,
    is_error: bool,
) -> CallToolResult {
    let mut content = Vec::with_capacity(1 + usize::from(note.is_some()));
    content.push(ContentBlock::text(text));
    content.extend(note.map(ContentBlock::text));
    let mut result = if is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    result.structured_content = Some(structured);
    result
}

impl From<ToolOutput> for CallToolResult {
    fn from(output: ToolOutput) -> Self {
        call_tool_result(output.text, output.value, output.note, output.is_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a note, a result is rmcp's structured result, error or not.
    #[test]
    fn parity_results_are_rmcps() {
        let value = serde_json::json!({"a": "x\"y\n\u{1F980}", "b": [1, 2.5, null, true], "c": {}});
        assert_eq!(
            CallToolResult::from(ToolOutput::success(value.clone())),
            CallToolResult::structured(value.clone())
        );
        assert_eq!(
            CallToolResult::from(ToolOutput::error(value.clone())),
            CallToolResult::structured_error(value)
        );
    }

    #[test]
    fn a_note_follows_the_json() {
        let output = ToolOutput::success(serde_json::json!({"a": 1})).with_note("careful".into());
        assert_eq!((output.text(), output.note(), output.is_error()), (r#"{"a":1}"#, Some("careful"), false));
        let result = CallToolResult::from(output);
        let texts: Vec<_> = result.content.iter().map(|c| c.as_text().unwrap().text.as_str()).collect();
        assert_eq!(texts, [r#"{"a":1}"#, "careful"]);
        assert_eq!(result.structured_content, Some(serde_json::json!({"a": 1})));
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
