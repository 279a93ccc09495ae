//! The one place a domain error becomes an MCP tool result, or the
//! JSON-RPC error of a request that is not a tool call; and the one rule
//! for logging an error a caller is answered with ([`log_error`]).

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

/// Logs an error that `what` (a tool, a method, a route) answers a caller
/// with, by the one rule of every surface (tool results, JSON-RPC errors,
/// the transports' HTTP answers): a mistake the caller can fix (every code
/// but INTERNAL) is theirs to read in the answer, so it is logged at debug;
/// a fault (INTERNAL: a bug, a store or an outside service failing) is the
/// operator's, logged at error with its cause, which the answer never shows.
///
/// rmcp logs each JSON-RPC error a handler returns once more, at warn; a
/// server's log setup drops that copy with [`is_rmcp_error_echo`].
pub fn log_error(what: &str, err: &LfError) {
    log_answer(what, err, err.message());
}

/// [`log_error`], where the caller was answered `answer`.
fn log_answer(what: &str, err: &LfError, answer: &str) {
    match err.code() {
        ErrorCode::Internal => tracing::error!(what, error = ?err, "a call failed"),
        code => tracing::debug!(what, %code, answer, "a call was refused"),
    }
}

/// [`log_error`]'s rule for a JSON-RPC error the server builds itself (an
/// unknown prompt or tool, a bad cursor): an internal error is a fault, any
/// other a mistake of the caller's. Returns it, to be answered.
pub(crate) fn logged(err: McpError) -> McpError {
    if err.code == rmcp::model::ErrorCode::INTERNAL_ERROR {
        tracing::error!(code = err.code.0, answer = %err.message, "a request failed");
    } else {
        tracing::debug!(code = err.code.0, answer = %err.message, "a request was refused");
    }
    err
}

/// Whether `meta` is rmcp's own copy of a JSON-RPC error a handler
/// returned (its `response error` event, at warn, with the request's `id`
/// and the `error`): every such error is logged by [`log_error`]'s rule
/// where it is made, so a log setup drops this copy, which would log a
/// caller's mistake as a warning. The stdio transport's tests hold it to
/// the event rmcp really emits.
pub fn is_rmcp_error_echo(meta: &tracing::Metadata<'_>) -> bool {
    meta.is_event()
        && *meta.level() == tracing::Level::WARN
        && meta.target() == "rmcp::service"
        && meta.fields().field("id").is_some()
        && meta.fields().field("error").is_some()
}

/// Whether `meta` is one of rmcp's events or spans below warn: they carry
/// whole requests and answers (`received request`, `response message`),
/// and an answer may hold what is shown once and never again, such as the
/// webhook secret `create_workflow` makes. A log setup drops them at every
/// level, so that no log filter prints a secret; rmcp's warnings and
/// errors stay.
pub fn is_rmcp_detail(meta: &tracing::Metadata<'_>) -> bool {
    *meta.level() > tracing::Level::WARN && (meta.target() == "rmcp" || meta.target().starts_with("rmcp::"))
}

/// `{code, message, details}` of an error, logged by [`log_error`]'s rule.
/// INTERNAL errors are answered with the generic message only.
pub fn error_value(tool: &str, err: &LfError) -> Value {
    log_error(tool, err);
    if err.code() == ErrorCode::Internal {
        return json!({"code": "INTERNAL", "message": err.message(), "details": {}});
    }
    json!({"code": err.code().as_str(), "message": err.message(), "details": details(err)})
}

pub(crate) fn details(err: &LfError) -> Map<String, Value> {
    err.details().iter().map(|(k, v)| (k.clone(), detail(v))).collect()
}

/// A tool result with `isError: true` and the error as structured content
/// and as JSON text.
pub fn error_result(tool: &str, err: &LfError) -> CallToolResult {
    ToolOutput::error(error_value(tool, err)).into()
}

/// The JSON-RPC error of a request other than a tool call (prompts,
/// resources, tasks) that met `err`, logged by [`log_error`]'s rule: -32602
/// naming its code, with `{code, ...details}` as its data; for INTERNAL,
/// -32603 with the generic message only.
pub(crate) fn request_error(err: LfError) -> McpError {
    request_error_saying(err.message(), &err)
}

/// [`request_error`] with `message` in place of `err`'s own (the same
/// mistake in the words of the request that met it).
pub(crate) fn request_error_saying(message: &str, err: &LfError) -> McpError {
    log_answer("request", err, message);
    match err.code() {
        ErrorCode::Internal => McpError::internal_error(err.message().to_owned(), None),
        code => {
            let mut data = details(err);
            data.insert("code".to_owned(), Value::from(code.as_str()));
            McpError::invalid_params(format!("{code}: {message}"), Some(Value::Object(data)))
        }
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
    fn a_request_error_carries_its_code_and_details_as_data() {
        let e = LfError::new(ErrorCode::MissingParams, "needs Topic")
            .with_detail("missing", DetailValue::Strs(vec!["Topic".into()]));
        let rpc = request_error_saying("say it otherwise", &e);
        assert_eq!(rpc.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(rpc.message, "MISSING_PARAMS: say it otherwise");
        assert_eq!(rpc.data, Some(json!({"code": "MISSING_PARAMS", "missing": ["Topic"]})));
        let internal = request_error(LfError::internal("relation \"lenses\" does not exist"));
        assert_eq!(internal.code, rmcp::model::ErrorCode::INTERNAL_ERROR);
        assert!(internal.data.is_none() && !internal.message.contains("relation"));
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
