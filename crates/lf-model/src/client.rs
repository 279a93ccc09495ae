//! The OpenAI-compatible chat-completions client.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use lf_core::meter::{ModelCall, meter, outcome_of};
use lf_core::{
    CallStats, ChatRequest, ChatResponse, Detail, ErrorCode, LfError, LfResult, ModelProvider, ToolCall,
    ToolChatRequest, ToolChatResponse, Turn,
};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use serde_json::{Map, Value, json};
use tracing::Instrument;

use crate::config::{EndpointConfig, parse_model_name};

/// The name this provider gives itself ([`ModelProvider::name`]).
pub const PROVIDER_NAME: &str = "openai-compatible";

/// The most of an error answer's body kept for the logs.
const ERROR_EXCERPT_BYTES: usize = 2048;

/// An OpenAI-compatible chat-completions client: POST
/// `{base_url}/chat/completions` with one system and one user message
/// (and, for [`ModelProvider::chat_with_tools`], the tools offered and the
/// turns so far: assistant messages with `tool_calls`, `tool` results),
/// `stream: false`. Works with OpenAI, Ollama (`http://localhost:11434/v1`),
/// vLLM and llama.cpp's server.
///
/// - The model is the request's [`ChatRequest::model`] when set (a battle's
///   `ai_judge_model_key`), else the configured one; `max_tokens`,
///   `temperature`, `top_p`, `seed` and `stop` are sent only when the
///   request sets them.
/// - The answer's [`CallStats`]: `usage.prompt_tokens` and
///   `completion_tokens`, `choices[0].finish_reason`, the milliseconds from
///   sending the attempt that answered to its status line (first byte), and
///   those of the whole call, retries and waits included (total).
/// - Each attempt has [`EndpointConfig::timeout`]; an answer body over
///   [`EndpointConfig::max_response_bytes`] is refused. Redirects are not followed.
/// - At most one retry per call: after a 429 (waiting its `Retry-After` or
///   `retry-after-ms`, 1 s when absent, unless that exceeds
///   [`EndpointConfig::max_retry_wait`]), after a 5xx answer or a refused
///   connection (waiting [`EndpointConfig::retry_backoff`]). A timeout is not retried.
/// - Errors: 401/403 → PERMISSION_DENIED; 404 → INVALID_ARGUMENT (unknown
///   model or wrong base URL); 429 twice or a long `Retry-After` → THROTTLED
///   with `details.retry_after_seconds`; anything else (5xx twice, other
///   statuses, timeouts, oversize or malformed answers, transport failures) →
///   INTERNAL. Messages never contain the URL, the key or the server's body;
///   every failure is logged (tracing, target `lf_model`) with its cause and
///   without the key.
pub struct OpenAiCompatible {
    http: reqwest::Client,
    endpoint: Url,
    auth: Option<HeaderValue>,
    key: Option<String>,
    config: EndpointConfig,
}

impl fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("endpoint", &self.endpoint.as_str())
            .field("config", &self.config)
            .finish()
    }
}

/// TLS for https: rustls with the ring provider and the system's CA
/// certificates. A plain-http endpoint (a local Ollama in a slim container)
/// does not need the certificates, so it works without them.
fn tls_config(https: bool) -> Result<rustls::ClientConfig, String> {
    rustls_config(https)
}

/// A reqwest client builder with this crate's TLS set up. reqwest is built
/// here without a process-wide crypto provider (`rustls-no-provider`, to
/// avoid aws-lc-rs), and cargo unifies that feature across the workspace:
/// any other reqwest client in the same build (tests, tools) must start from
/// this builder, or building it panics.
pub fn client_builder() -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder();
    match client_tls() {
        Some(tls) => builder.tls_backend_preconfigured(tls),
        None => builder,
    }
}

/// This crate's TLS set-up for a client built elsewhere (the trace
/// exporter's blocking one), for the same reason as [`client_builder`];
/// `None` when it cannot be made.
pub fn client_tls() -> Option<rustls::ClientConfig> {
    rustls_config(false).ok()
}

fn rustls_config(https: bool) -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?;
    match rustls_platform_verifier::Verifier::new(provider) {
        Ok(verifier) => {
            Ok(builder.dangerous().with_custom_certificate_verifier(Arc::new(verifier)).with_no_client_auth())
        }
        Err(e) if https => Err(format!(
            "cannot verify https servers: {e} (install the system's CA certificates, e.g. the ca-certificates package)"
        )),
        Err(_) => Ok(builder.with_root_certificates(rustls::RootCertStore::empty()).with_no_client_auth()),
    }
}

/// Why one attempt failed.
enum Failure {
    Status {
        status: StatusCode,
        retry_after: Option<Duration>,
        body: String,
    },
    Timeout,
    Connect(reqwest::Error),
    /// The egress guard refused the server's address: why, in its words.
    Refused(String),
    Transport(reqwest::Error),
    TooLarge {
        limit: usize,
    },
}

impl Failure {
    fn retry_wait(&self, config: &EndpointConfig) -> Option<Duration> {
        match self {
            Failure::Status { status, retry_after, .. } if *status == StatusCode::TOO_MANY_REQUESTS => {
                let wait = retry_after.unwrap_or(Duration::from_secs(1));
                (wait <= config.max_retry_wait).then_some(wait)
            }
            Failure::Status { status, .. } if status.is_server_error() => Some(config.retry_backoff),
            Failure::Connect(_) => Some(config.retry_backoff),
            _ => None,
        }
    }

    /// For the logs: never the key, never more than an excerpt of a body.
    fn describe(&self) -> String {
        match self {
            Failure::Status { status, body, .. } if body.is_empty() => format!("HTTP {status}"),
            Failure::Status { status, body, .. } => format!("HTTP {status}: {body}"),
            Failure::Timeout => "timed out".into(),
            Failure::Connect(e) => format!("could not connect: {e}"),
            Failure::Refused(why) => format!("refused by the egress guard: {why}"),
            Failure::Transport(e) => format!("transport error: {e}"),
            Failure::TooLarge { limit } => format!("answer body larger than {limit} bytes"),
        }
    }

    fn into_error(self, model: &str, config: &EndpointConfig) -> LfError {
        let cause = self.describe();
        match self {
            Failure::Status { status, .. } if matches!(status.as_u16(), 401 | 403) => LfError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "The model server refused this server's credentials (HTTP {}). The operator should check LENSERFIGHT_MODEL_API_KEY.",
                    status.as_u16()
                ),
            ),
            Failure::Status { status, .. } if status == StatusCode::NOT_FOUND => LfError::invalid_argument(format!(
                "The model server answered 404 for model {}: the model is unknown there, or LENSERFIGHT_MODEL_BASE_URL is wrong. Check the model name (the battle's ai_judge_model_key or LENSERFIGHT_MODEL_NAME).",
                LfError::excerpt(model)
            ))
            .with_field("model"),
            Failure::Status { status, retry_after, .. } if status == StatusCode::TOO_MANY_REQUESTS => {
                let secs = retry_after.map_or(1, |d| d.as_secs_f64().ceil() as i64).max(1);
                LfError::new(
                    ErrorCode::Throttled,
                    format!("The model server is rate-limiting requests; try again in {secs} s."),
                )
                .with_detail("retry_after_seconds", Detail::Int(secs))
            }
            Failure::Status { status, .. } => LfError::new(
                ErrorCode::Internal,
                format!("The model server failed (HTTP {}); try again later.", status.as_u16()),
            )
            .with_source(cause),
            Failure::Timeout => LfError::new(
                ErrorCode::Internal,
                format!("The model server did not answer within {} s; try again later.", config.timeout.as_secs_f64()),
            )
            .with_source(cause),
            Failure::TooLarge { limit } => LfError::new(
                ErrorCode::Internal,
                format!("The model server's answer was larger than the {limit}-byte limit and was refused."),
            )
            .with_source(cause),
            Failure::Connect(e) => {
                LfError::new(ErrorCode::Internal, "Could not reach the model server; try again later.").with_source(e)
            }
            Failure::Refused(why) => LfError::new(
                ErrorCode::PermissionDenied,
                format!("The egress guard refuses the model server's address, so nothing was sent: {why}"),
            ),
            Failure::Transport(e) => {
                LfError::new(ErrorCode::Internal, "The call to the model server failed; try again later.").with_source(e)
            }
        }
    }
}

fn classify(e: reqwest::Error) -> Failure {
    if let Some(why) = refused(&e) {
        Failure::Refused(why)
    } else if e.is_timeout() {
        Failure::Timeout
    } else if e.is_connect() {
        Failure::Connect(e)
    } else {
        Failure::Transport(e)
    }
}

/// The egress guard's refusal somewhere in `e`'s sources: an
/// [`std::io::Error`] of kind `PermissionDenied` from the resolver.
fn refused(e: &reqwest::Error) -> Option<String> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(cause) = next {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::PermissionDenied
        {
            return Some(io.to_string());
        }
        next = cause.source();
    }
    None
}

/// `retry-after-ms` (OpenAI) or `Retry-After` in seconds. An HTTP date is
/// not understood and counts as absent.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok().filter(|n| n.is_finite() && *n >= 0.0)
    };
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| number(RETRY_AFTER.as_str()).map(Duration::from_secs_f64))
}

/// Reads at most `limit` bytes of the body; `Err(TooLarge)` past that.
async fn read_limited(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, Failure> {
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(Failure::TooLarge { limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(classify)? {
        if body.len() + chunk.len() > limit {
            return Err(Failure::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The start of an error body, for the logs; `key` replaced if echoed.
async fn excerpt(response: reqwest::Response, key: Option<&str>) -> String {
    let mut body = Vec::new();
    let mut response = response;
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= ERROR_EXCERPT_BYTES {
            break;
        }
    }
    body.truncate(ERROR_EXCERPT_BYTES);
    let text = String::from_utf8_lossy(&body).into_owned();
    redact(text, key)
}

fn redact(text: String, key: Option<&str>) -> String {
    match key {
        Some(k) if text.contains(k) => text.replace(k, "<redacted>"),
        _ => text,
    }
}

/// What a chat-completions answer holds.
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    text: String,
    calls: Vec<ToolCall>,
    model: Option<String>,
    tokens: Option<u64>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    finish_reason: Option<String>,
    /// From sending the attempt that answered to its status line.
    first_byte: Option<Duration>,
}

/// A chat-completions answer that may ask for tool calls (`with_tools`):
/// then `content` may be null, and `tool_calls` are read strictly.
fn parse_tool_answer(body: &[u8], with_tools: bool) -> Result<Answer, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let Some(object) = value.as_object() else { return Err("the answer is not a JSON object".into()) };
    if let Some(error) = object.get("error") {
        return Err(format!("the answer is an error object: {error}"));
    }
    let choice = object
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or("the answer has no choices[0]")?;
    let message = choice.get("message");
    let calls = match message.and_then(|m| m.get("tool_calls")) {
        Some(Value::Array(calls)) if with_tools => calls.iter().map(tool_call).collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    let text = match message.and_then(|m| m.get("content")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None if !calls.is_empty() => String::new(),
        Some(Value::Null) | None => return Err("choices[0].message.content is missing or null".into()),
        Some(other) => return Err(format!("choices[0].message.content is not a string: {other}")),
    };
    let model =
        object.get("model").and_then(Value::as_str).filter(|m| !m.trim().is_empty()).map(str::to_owned);
    let usage = |name: &str| object.get("usage").and_then(|u| u.get(name)).and_then(Value::as_u64);
    let finish_reason =
        choice.get("finish_reason").and_then(Value::as_str).filter(|r| !r.is_empty()).map(str::to_owned);
    Ok(Answer {
        text,
        calls,
        model,
        tokens: usage("total_tokens"),
        input_tokens: usage("prompt_tokens"),
        output_tokens: usage("completion_tokens"),
        finish_reason,
        first_byte: None,
    })
}

/// One of `choices[0].message.tool_calls`: `{id, type: function,
/// function: {name, arguments}}`, the arguments a JSON text.
fn tool_call(call: &Value) -> Result<ToolCall, String> {
    let text = |v: Option<&Value>, what: &str| match v {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(format!("a tool call's {what} is missing or not a string: {call}")),
    };
    let function = call.get("function");
    Ok(ToolCall {
        id: text(call.get("id"), "id")?,
        name: text(function.and_then(|f| f.get("name")), "function.name")?,
        arguments: match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(s)) => s.clone(),
            // Some servers send the object itself.
            Some(v @ Value::Object(_)) => v.to_string(),
            _ => return Err(format!("a tool call's function.arguments is missing: {call}")),
        },
    })
}

impl OpenAiCompatible {
    /// A client for `config`. Fails (INVALID_ARGUMENT) only when an https
    /// endpoint cannot be verified because the system has no CA certificates,
    /// or when the key cannot be sent as a header.
    pub fn new(config: EndpointConfig) -> LfResult<Self> {
        Self::build(config, None)
    }

    /// A client for `config` whose host names are looked up by `dns` (the
    /// egress guard's resolver, `lf_egress::guarded_dns`): a name it
    /// refuses (an `io::Error` of kind `PermissionDenied` in the request's
    /// error) fails the call at once, PERMISSION_DENIED with the guard's
    /// words, with nothing sent and no retry.
    pub fn guarded(config: EndpointConfig, dns: Arc<dyn reqwest::dns::Resolve>) -> LfResult<Self> {
        Self::build(config, Some(dns))
    }

    fn build(config: EndpointConfig, dns: Option<Arc<dyn reqwest::dns::Resolve>>) -> LfResult<Self> {
        let mut endpoint = config.base_url.clone();
        let path = format!("{}/chat/completions", endpoint.path().trim_end_matches('/'));
        endpoint.set_path(&path);
        let tls = tls_config(endpoint.scheme() == "https").map_err(LfError::invalid_argument)?;
        let mut http = reqwest::Client::builder();
        if let Some(dns) = dns {
            // Guarded names are not sent through a proxy either: the
            // addresses checked are those connected to.
            http = http.dns_resolver(dns).no_proxy();
        }
        let http = http
            .tls_backend_preconfigured(tls)
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("lenserfight/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LfError::invalid_argument(format!("the HTTP client could not be built: {e}")))?;
        let auth = match &config.api_key {
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                    .map_err(|_| LfError::invalid_argument("the API key cannot be sent as an HTTP header"))?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let key = config.api_key.as_ref().map(|k| k.expose().to_owned());
        Ok(Self { http, endpoint, auth, key, config })
    }

    /// Where requests go: `{base_url}/chat/completions`.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// The model asked when a request names none.
    pub fn default_model(&self) -> &str {
        &self.config.model
    }

    fn body(&self, request: &ChatRequest) -> LfResult<(String, Vec<u8>)> {
        self.body_with(request, None)
    }

    /// The body of `request`, with the tools and turns of `tools` when given.
    fn body_with(
        &self,
        request: &ChatRequest,
        tools: Option<&ToolChatRequest>,
    ) -> LfResult<(String, Vec<u8>)> {
        let model = match request.model.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
            Some(m) => parse_model_name(m).map_err(|why| {
                LfError::invalid_argument(format!("The model to ask is not valid: {why}."))
                    .with_field("model")
            })?,
            None => self.config.model.clone(),
        };
        let mut body = Map::new();
        body.insert("model".into(), json!(model));
        let mut messages = vec![
            json!({"role": "system", "content": request.system}),
            json!({"role": "user", "content": request.user}),
        ];
        if let Some(t) = tools {
            messages.extend(t.turns.iter().map(turn_message));
            let specs = t
                .tools
                .iter()
                .map(|spec| {
                    let parameters: Value = serde_json::from_str(&spec.parameters).map_err(|e| {
                        LfError::invalid_argument(format!(
                            "The parameters of tool {} are not JSON: {e}.",
                            spec.name
                        ))
                        .with_field("tools")
                    })?;
                    Ok(json!({"type": "function", "function": {
                        "name": spec.name, "description": spec.description, "parameters": parameters
                    }}))
                })
                .collect::<LfResult<Vec<Value>>>()?;
            if !specs.is_empty() {
                body.insert("tools".into(), Value::Array(specs));
            }
        }
        body.insert("messages".into(), Value::Array(messages));
        if let Some(n) = request.max_tokens {
            body.insert("max_tokens".into(), json!(n));
        }
        if let Some(t) = request.temperature {
            if !t.is_finite() {
                return Err(LfError::invalid_argument("The temperature must be a finite number.")
                    .with_field("temperature"));
            }
            // Through its shortest decimal form, so 0.7f32 goes out as 0.7.
            let t: f64 = t.to_string().parse().unwrap_or(f64::from(t));
            body.insert("temperature".into(), json!(t));
        }
        if let Some(p) = request.top_p {
            if !p.is_finite() {
                return Err(LfError::invalid_argument("top_p must be a finite number.").with_field("top_p"));
            }
            let p: f64 = p.to_string().parse().unwrap_or(f64::from(p));
            body.insert("top_p".into(), json!(p));
        }
        if let Some(seed) = request.seed {
            body.insert("seed".into(), json!(seed));
        }
        if !request.stop.is_empty() {
            body.insert("stop".into(), json!(request.stop));
        }
        body.insert("stream".into(), json!(false));
        let bytes = serde_json::to_vec(&Value::Object(body)).map_err(LfError::internal)?;
        Ok((model, bytes))
    }

    /// One POST: the answer's bytes and how long its status line took.
    async fn attempt(&self, body: &[u8]) -> Result<(Vec<u8>, Duration), Failure> {
        let mut request = self
            .http
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .body(body.to_vec());
        if let Some(auth) = &self.auth {
            request = request.header(AUTHORIZATION, auth.clone());
        }
        let sent = Instant::now();
        let response = request.send().await.map_err(classify)?;
        let first_byte = sent.elapsed();
        let status = response.status();
        if status.is_success() {
            return Ok((read_limited(response, self.config.max_response_bytes).await?, first_byte));
        }
        let retry_after = retry_after(response.headers());
        // A refusal of credentials may quote part of them: keep no body.
        let body = if matches!(status.as_u16(), 401 | 403) {
            String::new()
        } else {
            excerpt(response, self.key.as_deref()).await
        };
        Err(Failure::Status { status, retry_after, body })
    }
}

#[async_trait]
impl ModelProvider for OpenAiCompatible {
    fn name(&self) -> &str {
        PROVIDER_NAME
    }

    async fn chat(&self, request: ChatRequest) -> LfResult<ChatResponse> {
        let (model, body) = self.body(&request)?;
        let span = self.span(&model);
        let began = Instant::now();
        let result =
            self.send(&model, &body).instrument(span.clone()).await.and_then(|(answer, first_byte)| {
                match parse_tool_answer(&answer, false) {
                    Ok(a) => Ok(Answer { first_byte: Some(first_byte), ..a }),
                    Err(why) => Err(self.malformed(&model, &answer, &why)),
                }
            });
        self.metered(&model, &result, began);
        traced(&span, &result);
        let a = result?;
        let stats = CallStats {
            input_tokens: a.input_tokens,
            output_tokens: a.output_tokens,
            finish_reason: a.finish_reason,
            first_byte_ms: a.first_byte.map(millis),
            total_ms: Some(millis(began.elapsed())),
        };
        span.record("gen_ai.usage.input_tokens", stats.input_tokens);
        span.record("gen_ai.usage.output_tokens", stats.output_tokens);
        Ok(ChatResponse { stats, ..ChatResponse::new(a.text, a.model.unwrap_or(model)) })
    }

    /// The request with its tools and turns (OpenAI's `tools`, assistant
    /// messages with `tool_calls`, `tool` messages); the answer's text, the
    /// calls it asks for (read strictly: a call without an id or a name is
    /// a malformed answer) and `usage.total_tokens`.
    async fn chat_with_tools(&self, request: ToolChatRequest) -> LfResult<ToolChatResponse> {
        let (model, body) = self.body_with(&request.chat, Some(&request))?;
        let span = self.span(&model);
        let began = Instant::now();
        let result = self.send(&model, &body).instrument(span.clone()).await.and_then(|(answer, _)| {
            match parse_tool_answer(&answer, true) {
                Ok(a) => Ok(a),
                Err(why) => Err(self.malformed(&model, &answer, &why)),
            }
        });
        self.metered(&model, &result, began);
        traced(&span, &result);
        let a = result?;
        Ok(ToolChatResponse {
            text: a.text,
            calls: a.calls,
            model: a.model.unwrap_or(model),
            tokens: a.tokens,
        })
    }
}

/// A turn as a chat-completions message.
fn turn_message(turn: &Turn) -> Value {
    match turn {
        Turn::Assistant { text, calls } => {
            let mut m = json!({"role": "assistant", "content": text});
            if !calls.is_empty() {
                m["tool_calls"] = calls
                    .iter()
                    .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                    .collect();
            }
            m
        }
        Turn::ToolResult { call_id, content } => {
            json!({"role": "tool", "tool_call_id": call_id, "content": content})
        }
    }
}

/// Records on a model call's `span` what it answered: the model that
/// answered, or the error's code.
fn traced(span: &tracing::Span, result: &LfResult<Answer>) {
    match result {
        Ok(a) => span.record("gen_ai.response.model", a.model.as_deref()),
        Err(e) => span.record("error.type", e.code().as_str()).record("otel.status_code", "ERROR"),
    };
}

impl OpenAiCompatible {
    /// The span of one call asking `model`, with the GenAI semantic
    /// conventions' attributes (what it answered is recorded after).
    fn span(&self, model: &str) -> tracing::Span {
        tracing::info_span!(
            "chat",
            otel.name = %format_args!("chat {model}"),
            otel.kind = "client",
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = "openai",
            gen_ai.request.model = model,
            gen_ai.response.model = tracing::field::Empty,
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
            server.address = self.endpoint.host_str().unwrap_or(""),
            server.port = self.endpoint.port_or_known_default(),
            "error.type" = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        )
    }

    /// Tells the process's meter of a call that asked `model`: labelled by
    /// the endpoint's host and the configured model (any other model a
    /// request named is `other`: those names are not a bounded set).
    fn metered(&self, model: &str, result: &LfResult<Answer>, began: Instant) {
        let host = self.endpoint.host_str().unwrap_or("");
        let endpoint = match self.endpoint.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        let model = if model == self.config.model { model } else { "other" };
        meter().model_call(&ModelCall {
            endpoint: &endpoint,
            model,
            outcome: outcome_of(result),
            tokens: result.as_ref().ok().and_then(|a| a.tokens),
            took: began.elapsed(),
        });
    }

    /// Posts `body` (asking `model`), retrying once as the type's docs say:
    /// the answer's bytes, or the error.
    async fn send(&self, model: &str, body: &[u8]) -> LfResult<(Vec<u8>, Duration)> {
        let mut retried = false;
        loop {
            match self.attempt(body).await {
                Ok(answer) => return Ok(answer),
                Err(failure) => {
                    let wait = if retried { None } else { failure.retry_wait(&self.config) };
                    let cause = redact(failure.describe(), self.key.as_deref());
                    match wait {
                        Some(wait) => {
                            tracing::warn!(target: "lf_model", endpoint = %self.endpoint, %model, %cause, retry_in_ms = wait.as_millis() as u64, "model call failed; retrying once");
                            tokio::time::sleep(wait).await;
                            retried = true;
                        }
                        None => {
                            let err = failure.into_error(model, &self.config);
                            tracing::warn!(target: "lf_model", endpoint = %self.endpoint, %model, %cause, code = %err.code(), "model call failed");
                            return Err(err);
                        }
                    }
                }
            }
        }
    }

    /// The error of an answer that is not a chat completion, logged with
    /// the start of its body.
    fn malformed(&self, model: &str, answer: &[u8], why: &str) -> LfError {
        let head = redact(
            String::from_utf8_lossy(&answer[..answer.len().min(ERROR_EXCERPT_BYTES)]).into_owned(),
            self.key.as_deref(),
        );
        let cause = format!("malformed chat-completions answer: {why}; body starts: {head}");
        tracing::warn!(target: "lf_model", endpoint = %self.endpoint, %model, %cause, "model call failed");
        LfError::new(
            ErrorCode::Internal,
            "The model server's answer was not a chat completion; try again later.",
        )
        .with_source(cause)
    }
}

/// Whole milliseconds, saturating.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text and model of a chat-completions answer, or what is wrong with it.
    fn parse_answer(body: &[u8]) -> Result<(String, Option<String>), String> {
        let a = parse_tool_answer(body, false)?;
        Ok((a.text, a.model))
    }

    #[test]
    fn answers_are_read_strictly() {
        let ok = br#"{"id":"x","model":"m-1","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}"#;
        assert_eq!(parse_answer(ok).unwrap(), ("hi".to_owned(), Some("m-1".to_owned())));
        let no_model = br#"{"choices":[{"message":{"content":""}}]}"#;
        assert_eq!(parse_answer(no_model).unwrap(), (String::new(), None));
        for bad in [
            &b"not json"[..],
            b"[]",
            br#"{"choices":[]}"#,
            br#"{"choices":[{"message":{"content":null}}]}"#,
            br#"{"choices":[{"message":{"content":3}}]}"#,
            br#"{"error":{"message":"overloaded"}}"#,
        ] {
            assert!(parse_answer(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn tool_calls_are_read_strictly() {
        let calls = br#"{"model":"m","choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
            {"id":"call_1","type":"function","function":{"name":"get_lens","arguments":"{\"lens_id\":\"x\"}"}},
            {"id":"call_2","type":"function","function":{"name":"noop","arguments":{"a":1}}}]}}],
            "usage":{"total_tokens":42}}"#;
        let a = parse_tool_answer(calls, true).unwrap();
        assert_eq!(a.text, "");
        assert_eq!(a.tokens, Some(42));
        assert_eq!(
            a.calls,
            vec![
                ToolCall {
                    id: "call_1".into(),
                    name: "get_lens".into(),
                    arguments: r#"{"lens_id":"x"}"#.into()
                },
                ToolCall { id: "call_2".into(), name: "noop".into(), arguments: r#"{"a":1}"#.into() },
            ]
        );
        assert!(parse_tool_answer(calls, false).is_err(), "without tools, a null content is malformed");
        for bad in [
            &br#"{"choices":[{"message":{"content":null,"tool_calls":[{"type":"function","function":{"name":"x","arguments":"{}"}}]}}]}"#[..],
            br#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","function":{"arguments":"{}"}}]}}]}"#,
            br#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","function":{"name":"x"}}]}}]}"#,
            br#"{"choices":[{"message":{"content":null,"tool_calls":[]}}]}"#,
        ] {
            assert!(parse_tool_answer(bad, true).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn retry_after_headers_are_read() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        let mut date = HeaderMap::new();
        date.insert(RETRY_AFTER, HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after(&date), None);
    }

    #[test]
    fn echoed_keys_are_redacted() {
        assert_eq!(redact("bad key sk-123 given".into(), Some("sk-123")), "bad key <redacted> given");
        assert_eq!(redact("nothing".into(), Some("sk-123")), "nothing");
    }
}
