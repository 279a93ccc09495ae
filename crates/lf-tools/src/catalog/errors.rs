//! The one place a domain error becomes an MCP tool result, or the
//! JSON-RPC error of a request that is not a tool call.

use lf_core::{DetailValue, ErrorCode, LfError};
use rmcp::ErrorData as McpError;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

use crate::catalog::output::ToolOutput;

fn detail(v: &DetailValue) -> Value {
    match v {
        DetailValue::Str(s) => Value::String(s.clone()),
        DetailValue::Strs(v) => Value::Array(v.iter().cloned().map(Value::String).collect()),
        DetailValue::Int(i) => json!(i),
        DetailValue::Bool(b) => Value::Bool(*b),
        DetailValue::Map(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), detail(v))).collect()),
        DetailValue::List(l) => Value::Array(l.iter().map(detail).collect()),
    }
}

/// `{code, message, details}` of an error. INTERNAL errors are logged here
/// with their cause, and answered with the generic message only.
pub fn error_value(tool: &str, err: &LfError) -> Value {
    if err.code() == ErrorCode::Internal {
        tracing::error!(tool, error = ?err, "tool call failed");
        return json!({"code": "INTERNAL", "message": err.message(), "details": {}});
    }
    let details: Map<String, Value> = err.details().iter().map(|(k, v)| (k.clone(), detail(v))).collect();
    json!({"code": err.code().as_str(), "message": err.message(), "details": details})
}

/// A tool result with `isError: true` and the error as structured content
/// and as JSON text.
pub fn error_result(tool: &str, err: &LfError) -> CallToolResult {
    ToolOutput::error(error_value(tool, err)).into()
}

/// The JSON-RPC error of a request other than a tool call (prompts,
/// resources, tasks) that met `err`: -32602 naming its code, or for
/// INTERNAL, logged with its cause and answered generically.
pub(crate) fn request_error(err: LfError) -> McpError {
    match err.code() {
        ErrorCode::Internal => {
            tracing::error!(error = ?err, "request failed");
            McpError::internal_error(err.message().to_owned(), None)
        }
        _ => McpError::invalid_params(format!("{}: {}", err.code(), err.message()), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_hide_their_cause() {
        let v = error_value("t", &LfError::internal("relation \"lenses\" does not exist"));
        assert_eq!(v["code"], "INTERNAL");
        assert!(!v.to_string().contains("relation"));
    }

    #[test]
    fn details_become_json() {
        let e = LfError::bad_input("x")
            .with_detail("missing", DetailValue::Strs(vec!["A".into()]))
            .with_detail("n", DetailValue::Int(2));
        let r = error_result("t", &e);
        assert_eq!(r.is_error, Some(true));
        let v = r.structured_content.unwrap();
        assert_eq!(v, json!({"code": "BAD_INPUT", "message": "x", "details": {"missing": ["A"], "n": 2}}));
    }
}
