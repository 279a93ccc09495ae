//! What the outbound executors share: reading a step's config, the scope
//! its templates are filled from, opening its saved connection, sending
//! through the egress guard under the step's timeout, and turning what
//! comes back into an output or a [`Failure`].

use std::fmt::Display;
use std::sync::Arc;
use std::time::Duration;

use lf_core::ErrorCode;
use lf_egress::{
    Egress, EgressError, EgressErrorKind, EgressRequest, EgressResponse, HeaderMap, HeaderValue, Method, Url,
};
use lf_workflow::engine::{Failure, main_input};
use lf_workflow::{Connection, ConnectionService, Secret};
use serde_json::{Map, Value, json};

use crate::executor::Job;

/// Most characters of an answer quoted in an error.
const EXCERPT_CHARS: usize = 200;

pub(super) struct Shared {
    pub(super) egress: Egress,
    pub(super) connections: Arc<ConnectionService>,
}

impl Shared {
    /// Sends `request` through the egress guard within `timeout` (the
    /// guard's own deadline when `None`). Any status is an answer.
    pub(super) async fn send(
        &self,
        request: EgressRequest,
        timeout: Option<Duration>,
    ) -> Result<EgressResponse, Failure> {
        let timeout = timeout.unwrap_or(self.egress.config().timeout);
        match tokio::time::timeout(timeout, self.egress.send(request)).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(egress_failure(&e)),
            Err(_) => Err(Failure::new(
                "timeout",
                format!("no complete answer within {} ms; the request was abandoned", timeout.as_millis()),
            )),
        }
    }

    /// The saved connection the step names, when it names one; it must be
    /// of one of `providers`. Once opened, what it holds is added to the
    /// job's redaction ([`Job::secrets`]) before anything is sent.
    pub(super) async fn connection(&self, job: &Job, providers: &[&str]) -> Result<Option<Opened>, Failure> {
        let Some(connector) = &job.node().connector else { return Ok(None) };
        let r = connector.connection_ref.as_str();
        let (connection, secret) =
            self.connections.open_secret(job.started_by, r).await.map_err(|e| match e.code() {
                ErrorCode::NotFound => Failure::new("not_found", e.message()),
                _ => Failure::new(
                    "invalid_connection",
                    format!("the saved connection {r:?} could not be opened: {}", e.message()),
                ),
            })?;
        job.secrets.add(&connection, &secret);
        let opened = Opened { connection, secret };
        let provider = opened.connection.provider.as_str();
        if !providers.contains(&provider) {
            return Err(opened.invalid(format!(
                "is a {provider} connection; this step takes a {} connection",
                providers.join(" or ")
            )));
        }
        Ok(Some(opened))
    }

    /// The saved connection the step must name.
    pub(super) async fn required_connection(&self, job: &Job, providers: &[&str]) -> Result<Opened, Failure> {
        self.connection(job, providers).await?.ok_or_else(|| {
            Failure::new(
                "invalid_connection",
                format!(
                    "{} sends through a saved {} connection: give step {} a connector naming one",
                    job.node().node_type,
                    providers.join(" or "),
                    job.node().key
                ),
            )
        })
    }
}

/// A saved connection and its secret, opened for one attempt.
pub(super) struct Opened {
    pub(super) connection: Connection,
    secret: Secret,
}

impl Opened {
    pub(super) fn provider(&self) -> &str {
        self.connection.provider.as_str()
    }

    /// The failure of a connection that lacks what the step needs; `what`
    /// follows the connection's name ("has no host setting").
    pub(super) fn invalid(&self, what: impl Display) -> Failure {
        Failure::new(
            "invalid_connection",
            format!("the saved connection {:?} {what}", self.connection.connection_ref.as_str()),
        )
    }

    /// The text setting `key`, if set.
    pub(super) fn setting(&self, key: &str) -> Result<Option<&str>, Failure> {
        match self.connection.settings.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.invalid(format!("has a {key} setting that is not text"))),
        }
    }

    pub(super) fn settings(&self) -> &Map<String, Value> {
        &self.connection.settings
    }

    /// The secret as text (trimmed: a pasted token often ends in a newline).
    pub(super) fn secret(&self) -> Result<&str, Failure> {
        self.secret
            .expose_str()
            .map(str::trim)
            .map_err(|_| self.invalid("has a secret that is not UTF-8 text"))
    }

    /// The URL a setting holds, or `default`.
    pub(super) fn base_url(&self, key: &str, default: &str) -> Result<Url, Failure> {
        let text = self.setting(key)?.unwrap_or(default);
        Url::parse(text)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| self.invalid(format!("has a {key} setting that is not an http or https URL")))
    }
}

/// A step's config as the plan holds it: aliases renamed, defaults applied.
pub(crate) struct Config<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Config<'a> {
    pub(crate) fn of(job: &'a Job) -> Self {
        Config { map: &job.node().config }
    }

    fn wrong(key: &str, what: &str) -> Failure {
        Failure::new("config_invalid", format!("{key} must be {what}"))
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub(crate) fn str(&self, key: &str) -> Result<Option<&'a str>, Failure> {
        self.get(key).map(|v| v.as_str().ok_or_else(|| Self::wrong(key, "text"))).transpose()
    }

    pub(crate) fn required(&self, key: &str) -> Result<&'a str, Failure> {
        self.str(key)?.ok_or_else(|| Self::wrong(key, "given"))
    }

    pub(crate) fn uint(&self, key: &str) -> Result<Option<u64>, Failure> {
        self.get(key).map(|v| v.as_u64().ok_or_else(|| Self::wrong(key, "a whole number"))).transpose()
    }

    pub(super) fn object(&self, key: &str) -> Result<Option<&'a Map<String, Value>>, Failure> {
        self.get(key).map(|v| v.as_object().ok_or_else(|| Self::wrong(key, "an object"))).transpose()
    }

    /// One text or a list of them; none when absent.
    pub(super) fn texts(&self, key: &str) -> Result<Vec<&'a str>, Failure> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s]),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().ok_or_else(|| Self::wrong(key, "a text or a list of texts")))
                .collect(),
            Some(_) => Err(Self::wrong(key, "a text or a list of texts")),
        }
    }

    /// `timeout_ms`, for the types that have it.
    pub(super) fn timeout(&self) -> Result<Option<Duration>, Failure> {
        Ok(self.uint("timeout_ms")?.map(Duration::from_millis))
    }
}

/// What `[[name]]` placeholders are filled from: the step's inputs by
/// name, then the fields of its main input that no input shares a name
/// with (so a step fed a summarizer's whole output can say `[[text]]`).
pub(crate) fn scope(input: &Value) -> Value {
    let mut out = input.as_object().cloned().unwrap_or_default();
    if let Value::Object(main) = main_input(input) {
        for (k, v) in main {
            out.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    Value::Object(out)
}

/// A URL a step gives (`field` names it in the error).
pub(super) fn parse_url(field: &str, text: &str) -> Result<Url, Failure> {
    Url::parse(text.trim()).map_err(|e| {
        Failure::new("invalid_input", format!("{field} {} is not a URL ({e})", lf_core::clip(text, 200)))
    })
}

/// A request carrying `body` as JSON.
pub(super) fn json_request(method: Method, url: Url, body: &Value) -> EgressRequest {
    EgressRequest::new(method, url)
        .header(
            lf_egress::HeaderName::from_static("content-type"),
            HeaderValue::from_static("application/json"),
        )
        .body(body.to_string())
}

/// `request` with the job's idempotency key, for a request with an effect outside.
pub(super) fn with_key(request: EgressRequest, job: &Job) -> EgressRequest {
    match &job.idempotency_key {
        Some(key) => request.idempotency_key(key.clone()),
        None => request,
    }
}

/// The failure for a request the guard did not get answered.
pub(super) fn egress_failure(e: &EgressError) -> Failure {
    let code = match e.kind() {
        EgressErrorKind::Blocked => "blocked",
        EgressErrorKind::Timeout => "timeout",
        EgressErrorKind::Dns | EgressErrorKind::Http => "connect_error",
        EgressErrorKind::Invalid => "invalid_input",
        EgressErrorKind::Redirects => "too_many_redirects",
        EgressErrorKind::TooLarge => "too_large",
    };
    Failure::new(code, e.to_string())
}

/// The failure for an answer whose status says the request failed:
/// 429 `rate_limit`, 5xx `status_5xx`, other 4xx `status_4xx`.
pub(super) fn refuse_status(answer: &EgressResponse, service: &str) -> Result<(), Failure> {
    let status = answer.status;
    let code = match status.as_u16() {
        429 => "rate_limit",
        500..=599 => "status_5xx",
        400..=499 => "status_4xx",
        _ => return Ok(()),
    };
    let wait = answer
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(|v| format!(" (Retry-After: {})", lf_core::clip(v, 40)))
        .unwrap_or_default();
    Err(Failure::new(code, format!("{service} answered {status}{wait}: {}", excerpt(&answer.body))))
}

/// The start of an answer's body on one line, for an error message.
pub(super) fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let printable: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let line = printable.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return "(no body)".to_owned();
    }
    lf_core::clip(&line, EXCERPT_CHARS).into_owned()
}

/// Response headers as an object of lowercase names; repeated headers
/// joined by `, `.
pub(super) fn headers_json(headers: &HeaderMap) -> Value {
    let mut out = Map::new();
    for name in headers.keys() {
        let values: Vec<String> = headers
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        out.insert(name.as_str().to_ascii_lowercase(), Value::String(values.join(", ")));
    }
    Value::Object(out)
}

/// A body as JSON when it parses, else as text; none is null.
pub(super) fn body_json(body: &[u8]) -> Value {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Value::Null;
    }
    serde_json::from_slice(body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
}

/// The output of the HTTP types: `{status, headers, body}`.
pub(super) fn http_output(answer: &EgressResponse) -> Value {
    json!({
        "status": answer.status.as_u16(),
        "headers": headers_json(&answer.headers),
        "body": body_json(&answer.body),
    })
}

/// An answer's body that must be JSON.
pub(super) fn json_answer(answer: &EgressResponse, service: &str) -> Result<Value, Failure> {
    serde_json::from_slice(&answer.body).map_err(|e| {
        Failure::new(
            "invalid_response",
            format!(
                "{service} answered {} with a body that is not JSON ({e}): {}",
                answer.status,
                excerpt(&answer.body)
            ),
        )
    })
}

/// A filled template that must not be blank.
pub(super) fn not_blank(field: &str, text: String) -> Result<String, Failure> {
    if text.trim().is_empty() {
        return Err(Failure::new(
            "invalid_input",
            format!("{field} is empty once its placeholders are filled"),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_one_short_line() {
        assert_eq!(excerpt(b""), "(no body)");
        assert_eq!(excerpt(b"  bad\n\trequest \x07"), "bad request");
        let long = "x".repeat(300);
        assert_eq!(excerpt(long.as_bytes()).chars().count(), EXCERPT_CHARS + 1);
    }

    #[test]
    fn bodies_are_json_when_they_parse() {
        assert_eq!(body_json(b""), Value::Null);
        assert_eq!(body_json(b"{\"a\":1}"), json!({"a": 1}));
        assert_eq!(body_json(b"ok"), json!("ok"));
    }

    #[test]
    fn the_scope_is_the_inputs_then_the_main_inputs_fields() {
        let input = json!({"input": {"text": "main", "topic": "t"}, "text": "wired"});
        assert_eq!(scope(&input)["text"], "wired");
        assert_eq!(scope(&input)["topic"], "t");
        assert_eq!(scope(&json!({"input": "plain"}))["input"], "plain");
    }
}
