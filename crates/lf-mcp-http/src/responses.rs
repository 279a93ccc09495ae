//! Small HTTP answers shared by the routes.

use axum::Json;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::json;

/// `{"error": code, "error_description": description}` with `status`: the
/// OAuth error shape, used for every non-MCP error this server answers.
pub fn json_error(status: StatusCode, code: &str, description: &str) -> Response {
    (status, Json(json!({ "error": code, "error_description": description }))).into_response()
}

/// A JSON-RPC error with no request id (the request could not be read), with
/// `status`.
pub fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
    (status, Json(body)).into_response()
}
