//! `http_request`, `webhook_sender` and `graphql_request`: one request
//! each, through the egress guard, optionally with what a saved `http`
//! (or, for GraphQL, `github`) connection adds.

use lf_egress::{EgressRequest, HeaderMap, HeaderName, HeaderValue, Method, Url};
use lf_workflow::Pick;
use lf_workflow::engine::{Failure, main_input};
use lf_workflow::exec::fill_placeholders;
use serde_json::{Map, Value, json};

use super::common::{
    Config, Opened, Shared, http_output, json_answer, json_request, parse_url, refuse_status, scope, with_key,
};
use super::github::DEFAULT_API;
use crate::executor::Job;

pub(super) async fn http_request(s: &Shared, job: &Job) -> Result<Value, Failure> {
    let c = Config::of(job);
    let url = fill_placeholders(c.required("url")?, &scope(&job.input));
    let url = parse_url("url", &url)?;
    let method = match c.str("method")?.unwrap_or("GET") {
        m @ ("GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD") => Method::from_bytes(m.as_bytes()),
        other => {
            return Err(Failure::new(
                "config_invalid",
                format!(
                    "method must be GET, POST, PUT, PATCH, DELETE or HEAD, not {}",
                    lf_core::clip(other, 20)
                ),
            ));
        }
    }
    .map_err(|_| Failure::new("config_invalid", "method is not an HTTP method"))?;
    let link = Link::of(s.connection(job, &["http"]).await?.as_ref())?;
    let url = link.target(Some(url))?;

    let mut headers = link.headers.clone();
    for (name, value) in c.object("headers")?.into_iter().flatten() {
        let (name, value) = header(name, value).map_err(|why| {
            Failure::new("config_invalid", format!("headers: {} {why}", lf_core::clip(name, 60)))
        })?;
        headers.insert(name, value);
    }
    let body = match c.get("body") {
        Some(b) => Some(b.to_string()),
        None if matches!(method, Method::POST | Method::PUT | Method::PATCH) => {
            Some(main_input(&job.input)).filter(|v| !v.is_null()).map(Value::to_string)
        }
        None => None,
    };
    let effect = !matches!(method, Method::GET | Method::HEAD);
    let mut request = EgressRequest::new(method, url);
    if let Some(body) = body {
        if !headers.contains_key("content-type") {
            headers.insert(
                HeaderName::from_static("content-type"),
                HeaderValue::from_static("application/json"),
            );
        }
        request = request.body(body);
    }
    request = request.headers(headers);
    if effect {
        request = with_key(request, job);
    }
    let answer = s.send(request, c.timeout()?).await?;
    refuse_status(&answer, "the server")?;
    Ok(http_output(&answer))
}

pub(super) async fn webhook_sender(s: &Shared, job: &Job) -> Result<Value, Failure> {
    let c = Config::of(job);
    let link = Link::of(s.connection(job, &["http"]).await?.as_ref())?;
    let url = c.str("url")?.map(|u| parse_url("url", u)).transpose()?;
    let url = link.target(url)?;
    let path = c.str("payload_path")?.unwrap_or(lf_workflow::path::WHOLE);
    let pick = Pick::parse("payload_path", path).map_err(|e| Failure::new("config_invalid", e.message()))?;
    let payload = pick.pick(main_input(&job.input)).ok_or_else(|| {
        Failure::new("invalid_input", format!("payload_path {} selects nothing in the input", pick.as_str()))
    })?;
    let request = json_request(Method::POST, url, &payload).headers(link.headers.clone());
    let answer = s.send(with_key(request, job), c.timeout()?).await?;
    refuse_status(&answer, "the webhook")?;
    Ok(http_output(&answer))
}

pub(super) async fn graphql_request(s: &Shared, job: &Job) -> Result<Value, Failure> {
    let c = Config::of(job);
    let scope = scope(&job.input);
    let link = Link::of(s.connection(job, &["http", "github"]).await?.as_ref())?;
    let url = link.target(Some(parse_url("url", c.required("url")?)?))?;
    let mut body = Map::new();
    body.insert("query".into(), Value::String(fill_placeholders(c.required("query")?, &scope)));
    if let Some(variables) = c.object("variables")? {
        let mut variables = Value::Object(variables.clone());
        fill_strings(&mut variables, &scope);
        body.insert("variables".into(), variables);
    }
    let request = json_request(Method::POST, url, &Value::Object(body))
        .header(HeaderName::from_static("accept"), HeaderValue::from_static("application/json"))
        .headers(link.headers.clone());
    let answer = s.send(with_key(request, job), c.timeout()?).await?;
    refuse_status(&answer, "the GraphQL endpoint")?;
    let reply = json_answer(&answer, "the GraphQL endpoint")?;
    let errors = match reply.get("errors") {
        None | Some(Value::Null) => json!([]),
        Some(e @ Value::Array(_)) => e.clone(),
        Some(other) => json!([other]),
    };
    Ok(json!({
        "data": reply.get("data").cloned().unwrap_or(Value::Null),
        "errors": errors,
        "status": answer.status.as_u16(),
    }))
}

/// `[[name]]` filled in every string of `v`.
fn fill_strings(v: &mut Value, from: &Value) {
    match v {
        Value::String(s) => *s = fill_placeholders(s, from),
        Value::Array(a) => a.iter_mut().for_each(|x| fill_strings(x, from)),
        Value::Object(m) => m.values_mut().for_each(|x| fill_strings(x, from)),
        _ => {}
    }
}

/// One header of a step's or a connection's `headers`.
fn header(name: &str, value: &Value) -> Result<(HeaderName, HeaderValue), &'static str> {
    let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| "is not a header name")?;
    let value = value.as_str().ok_or("must have a text value")?;
    let value = HeaderValue::from_str(value).map_err(|_| "has a value that cannot be sent in a header")?;
    Ok((name, value))
}

/// What a saved connection adds to a request: its headers and
/// credentials, and the URL its credentials belong to.
struct Link {
    /// The connection's URL, and whether it is its secret (then its
    /// origin is never shown).
    base: Option<(Url, bool)>,
    headers: HeaderMap,
    name: String,
}

impl Link {
    fn of(opened: Option<&Opened>) -> Result<Link, Failure> {
        match opened {
            None => Ok(Link { base: None, headers: HeaderMap::new(), name: String::new() }),
            Some(o) if o.provider() == "github" => Link::github(o),
            Some(o) => Link::http(o),
        }
    }

    fn name(o: &Opened) -> String {
        o.connection.connection_ref.as_str().to_owned()
    }

    /// `http`: `url` and `headers` settings; the secret a URL or a token.
    fn http(o: &Opened) -> Result<Link, Failure> {
        let mut headers = HeaderMap::new();
        match o.settings().get("headers") {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (name, value) in m {
                    let (name, value) = header(name, value).map_err(|why| {
                        o.invalid(format!("has a header {} that {why}", lf_core::clip(name, 60)))
                    })?;
                    headers.insert(name, value);
                }
            }
            Some(_) => return Err(o.invalid("has a headers setting that is not an object")),
        }
        let secret = o.secret()?;
        let mut base = None;
        if let Some(url) = o.setting("url")? {
            let url = Url::parse(url).map_err(|_| o.invalid("has a url setting that is not a URL"))?;
            base = Some((url, false));
        }
        let lower = secret.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            let url = Url::parse(secret)
                .map_err(|_| o.invalid("has a secret that starts like a URL but is not one"))?;
            base = Some((url, true));
        } else {
            let (name, value) = match o.setting("auth_header")? {
                Some(h) => (
                    HeaderName::from_bytes(h.as_bytes())
                        .map_err(|_| o.invalid("has an auth_header setting that is not a header name"))?,
                    secret.to_owned(),
                ),
                None => (HeaderName::from_static("authorization"), format!("Bearer {secret}")),
            };
            headers.insert(name, credential(o, &value)?);
        }
        Ok(Link { base, headers, name: Link::name(o) })
    }

    /// `github`: its token, for its API's origin only.
    fn github(o: &Opened) -> Result<Link, Failure> {
        let base = o.base_url("base_url", DEFAULT_API)?;
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("authorization"),
            credential(o, &format!("Bearer {}", o.secret()?))?,
        );
        Ok(Link { base: Some((base, false)), headers, name: Link::name(o) })
    }

    /// Where the request goes: the step's URL, which must share the
    /// connection's origin when the connection has a URL, or else the
    /// connection's URL.
    fn target(&self, step: Option<Url>) -> Result<Url, Failure> {
        match (step, &self.base) {
            (Some(url), Some((base, secret))) if url.origin() != base.origin() => {
                let theirs = if *secret {
                    "the origin of its secret URL".to_owned()
                } else {
                    base.origin().ascii_serialization()
                };
                Err(Failure::new(
                    "invalid_input",
                    format!(
                        "the step's URL is on {}, but the saved connection {:?} sends its credentials only to {theirs}; use a URL there or another connection",
                        url.origin().ascii_serialization(),
                        self.name
                    ),
                ))
            }
            (Some(url), _) => Ok(url),
            (None, Some((base, _))) => Ok(base.clone()),
            (None, None) => Err(Failure::new(
                "config_invalid",
                "url is required unless the step's saved http connection holds one",
            )),
        }
    }
}

/// A credential as a header value, never logged.
pub(super) fn credential(o: &Opened, value: &str) -> Result<HeaderValue, Failure> {
    let mut v = HeaderValue::from_str(value)
        .map_err(|_| o.invalid("has a secret that cannot be sent in a header"))?;
    v.set_sensitive(true);
    Ok(v)
}
