//! The real client against a small OpenAI-compatible server started on
//! 127.0.0.1 by each test: it answers from a script and records what it got.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use http_body::Frame;
use lf_core::{
    ChatRequest, Detail, ErrorCode, LfError, ModelProvider, ToolCall, ToolChatRequest, ToolSpec, Turn,
};
use lf_model::{ApiKey, EndpointConfig, OpenAiCompatible, parse_base_url};
use serde_json::{Value, json};

const KEY: &str = "sk-test-0123456789";

enum Payload {
    Bytes(Vec<u8>),
    /// `count` chunks of `size` bytes, chunked encoding, no Content-Length.
    Chunks {
        count: usize,
        size: usize,
    },
}

struct Reply {
    status: u16,
    headers: Vec<(&'static str, &'static str)>,
    payload: Payload,
    delay: Duration,
}

impl Reply {
    fn json(status: u16, body: Value) -> Self {
        Self::raw(status, body.to_string().into_bytes())
    }
    fn raw(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Reply {
            status,
            headers: vec![("content-type", "application/json")],
            payload: Payload::Bytes(body.into()),
            delay: Duration::ZERO,
        }
    }
    fn answer(text: &str, model: &str) -> Self {
        Self::json(
            200,
            json!({
                "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
            }),
        )
    }
    fn error(status: u16, message: &str) -> Self {
        Self::json(status, json!({"error": {"message": message, "type": "server_error"}}))
    }
    fn header(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.push((name, value));
        self
    }
}

struct Seen {
    headers: HeaderMap,
    body: Value,
}

#[derive(Clone, Default)]
struct Script {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

struct Chunks {
    left: usize,
    chunk: Bytes,
}

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.left == 0 {
            return Poll::Ready(None);
        }
        self.left -= 1;
        Poll::Ready(Some(Ok(Frame::data(self.chunk.clone()))))
    }
}

async fn completions(State(script): State<Script>, headers: HeaderMap, body: Bytes) -> Response {
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    script.seen.lock().unwrap().push(Seen { headers, body });
    let next = script.replies.lock().unwrap().pop_front();
    let Some(reply) = next else {
        return Response::builder()
            .status(500)
            .body(Body::from("the test script has no more replies"))
            .unwrap();
    };
    tokio::time::sleep(reply.delay).await;
    let mut response = Response::builder().status(StatusCode::from_u16(reply.status).unwrap());
    for (name, value) in reply.headers {
        response = response.header(name, value);
    }
    let body = match reply.payload {
        Payload::Bytes(b) => Body::from(b),
        Payload::Chunks { count, size } => {
            Body::new(Chunks { left: count, chunk: Bytes::from(vec![b'x'; size]) })
        }
    };
    response.body(body).unwrap()
}

struct Server {
    base: String,
    script: Script,
}

impl Server {
    async fn start(replies: Vec<Reply>) -> Self {
        let script = Script { replies: Arc::new(Mutex::new(replies.into())), ..Script::default() };
        let app = Router::new().route("/v1/chat/completions", post(completions)).with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Server { base, script }
    }

    fn config(&self, key: Option<&str>) -> EndpointConfig {
        let mut config = EndpointConfig::new(
            parse_base_url(&self.base).unwrap(),
            key.map(|k| ApiKey::parse(k).unwrap()),
            "test-model".into(),
        );
        config.timeout = Duration::from_secs(10);
        config.retry_backoff = Duration::from_millis(50);
        config
    }

    fn client(&self) -> OpenAiCompatible {
        OpenAiCompatible::new(self.config(Some(KEY))).unwrap()
    }

    fn calls(&self) -> usize {
        self.script.seen.lock().unwrap().len()
    }
}

fn request() -> ChatRequest {
    ChatRequest::new("You are terse.", "Say hi.")
}

/// The error of a failed call, checked to hide the key and the server's body.
async fn failure(client: &OpenAiCompatible, code: ErrorCode) -> LfError {
    let err = client.chat(request()).await.expect_err("the call should fail");
    assert_eq!(err.code(), code, "{err:?}");
    assert!(!err.message().contains(KEY) && !err.message().contains("127.0.0.1"), "{err}");
    assert!(!format!("{err:?}").contains(KEY), "{err:?}");
    err
}

#[tokio::test]
async fn a_normal_answer_sends_the_key_model_and_messages() {
    let server = Server::start(vec![Reply::answer("Hi.", "test-model-2024-01-01")]).await;
    let mut req = request();
    req.max_tokens = Some(64);
    req.temperature = Some(0.7);
    // The stand-in is for offline providers: a model never sees it.
    req.stand_in = Some("a stand-in answer".into());
    let answer = server.client().chat(req).await.unwrap();
    assert_eq!(answer.text, "Hi.");
    assert_eq!(answer.model, "test-model-2024-01-01", "the model as the server names it");

    let seen = server.script.seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].headers["authorization"], format!("Bearer {KEY}").as_str());
    assert_eq!(seen[0].headers["content-type"], "application/json");
    assert_eq!(
        seen[0].body,
        json!({
            "model": "test-model",
            "messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hi."}],
            "max_tokens": 64,
            "temperature": 0.7,
            "stream": false
        })
    );
}

#[tokio::test]
async fn sampling_parameters_are_sent_and_usage_and_times_are_read() {
    let mut slow = Reply::json(
        200,
        json!({
            "model": "m-served",
            "choices": [{"message": {"content": "cut"}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 17, "completion_tokens": 5, "total_tokens": 22}
        }),
    );
    slow.delay = Duration::from_millis(150);
    let server = Server::start(vec![Reply::error(500, "hiccup"), slow]).await;
    let mut req = request();
    req.top_p = Some(0.9);
    req.seed = Some(42);
    req.stop = vec!["END".into(), "\n\n".into()];
    let answer = server.client().chat(req).await.unwrap();
    assert_eq!((answer.text.as_str(), answer.model.as_str()), ("cut", "m-served"));
    let s = &answer.stats;
    assert_eq!((s.input_tokens, s.output_tokens), (Some(17), Some(5)));
    assert_eq!(s.finish_reason.as_deref(), Some("length"));
    let (first, total) = (s.first_byte_ms.unwrap(), s.total_ms.unwrap());
    assert!(first >= 150, "the status line came after the answering attempt's delay: {first} ms");
    assert!(total >= first + 50, "the total counts the failed attempt and the backoff: {total} ms");
    let seen = server.script.seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!((&seen[1].body["top_p"], &seen[1].body["seed"]), (&json!(0.9), &json!(42)));
    assert_eq!(seen[1].body["stop"], json!(["END", "\n\n"]));
}

#[tokio::test]
async fn an_answer_without_usage_has_no_token_counts() {
    let server =
        Server::start(vec![Reply::json(200, json!({"choices": [{"message": {"content": "ok"}}]}))]).await;
    let answer = server.client().chat(request()).await.unwrap();
    let s = &answer.stats;
    assert_eq!((s.input_tokens, s.output_tokens, s.finish_reason.as_deref()), (None, None, None));
    assert!(s.first_byte_ms.is_some() && s.total_ms >= s.first_byte_ms);
    let seen = server.script.seen.lock().unwrap();
    for absent in ["top_p", "seed", "stop"] {
        assert!(seen[0].body.get(absent).is_none(), "{absent} is not sent unless set");
    }
}

#[tokio::test]
async fn the_request_model_overrides_and_no_key_sends_no_header() {
    let server =
        Server::start(vec![Reply::json(200, json!({"choices": [{"message": {"content": "ok"}}]}))]).await;
    let client = OpenAiCompatible::new(server.config(None)).unwrap();
    let mut req = request();
    req.model = Some("judge-model".into());
    let answer = client.chat(req).await.unwrap();
    assert_eq!((answer.text.as_str(), answer.model.as_str()), ("ok", "judge-model"));
    let seen = server.script.seen.lock().unwrap();
    assert_eq!(seen[0].body["model"], "judge-model");
    assert!(seen[0].body.get("max_tokens").is_none() && seen[0].body.get("temperature").is_none());
    assert!(!seen[0].headers.contains_key("authorization"));
}

#[tokio::test]
async fn a_bad_request_model_is_refused_before_any_call() {
    let server = Server::start(vec![]).await;
    let mut req = request();
    req.model = Some("a\u{0}b".into());
    let err = server.client().chat(req).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert_eq!(server.calls(), 0);
}

#[tokio::test]
async fn a_429_is_waited_out_once_then_succeeds() {
    let server = Server::start(vec![
        Reply::error(429, "slow down").header("retry-after", "1"),
        Reply::answer("late", "m"),
    ])
    .await;
    let start = Instant::now();
    let answer = server.client().chat(request()).await.unwrap();
    assert_eq!(answer.text, "late");
    assert!(start.elapsed() >= Duration::from_secs(1), "Retry-After honoured: {:?}", start.elapsed());
    assert_eq!(server.calls(), 2);
}

#[tokio::test]
async fn a_second_429_is_throttled() {
    let server = Server::start(vec![
        Reply::error(429, "slow down").header("retry-after-ms", "20"),
        Reply::error(429, "slow down").header("retry-after", "7"),
        Reply::answer("never", "m"),
    ])
    .await;
    let err = failure(&server.client(), ErrorCode::Throttled).await;
    assert_eq!(err.details(), &vec![("retry_after_seconds".to_owned(), Detail::Int(7))]);
    assert_eq!(server.calls(), 2, "one retry only");
}

#[tokio::test]
async fn a_retry_after_too_long_to_wait_is_throttled_at_once() {
    let server = Server::start(vec![Reply::error(429, "quota").header("retry-after", "3600")]).await;
    let start = Instant::now();
    let err = failure(&server.client(), ErrorCode::Throttled).await;
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(err.details(), &vec![("retry_after_seconds".to_owned(), Detail::Int(3600))]);
    assert_eq!(server.calls(), 1);
}

#[tokio::test]
async fn a_500_is_retried_once_then_succeeds() {
    let server = Server::start(vec![Reply::error(500, "boom"), Reply::answer("recovered", "m")]).await;
    assert_eq!(server.client().chat(request()).await.unwrap().text, "recovered");
    assert_eq!(server.calls(), 2);
}

#[tokio::test]
async fn a_persistent_500_is_an_internal_error_after_one_retry() {
    let server = Server::start(vec![
        Reply::error(503, "secret internals"),
        Reply::error(500, "secret internals"),
        Reply::answer("never", "m"),
    ])
    .await;
    let err = failure(&server.client(), ErrorCode::Internal).await;
    assert!(!err.message().contains("secret internals"), "{err}");
    assert!(
        err.cause().unwrap().to_string().contains("secret internals"),
        "the cause keeps the body for the logs"
    );
    assert_eq!(server.calls(), 2);
}

#[tokio::test]
async fn a_refused_key_is_permission_denied_and_not_retried() {
    for status in [401, 403] {
        let server =
            Server::start(vec![Reply::error(status, &format!("Incorrect API key provided: {KEY}"))]).await;
        let err = failure(&server.client(), ErrorCode::PermissionDenied).await;
        assert!(err.message().contains("LENSERFIGHT_MODEL_API_KEY"), "{err}");
        assert_eq!(server.calls(), 1);
    }
}

#[tokio::test]
async fn an_unknown_model_is_an_invalid_argument() {
    let server = Server::start(vec![Reply::error(404, "model 'nope' not found")]).await;
    let err = failure(&server.client(), ErrorCode::InvalidArgument).await;
    assert!(err.message().contains("\"test-model\""), "{err}");
    assert_eq!(server.calls(), 1);
}

#[tokio::test]
async fn a_malformed_answer_is_an_internal_error_with_its_cause() {
    for (body, cause) in [
        (&b"{\"choices\": [ not json"[..], "not JSON"),
        (br#"{"choices": []}"#, "choices[0]"),
        (br#"{"choices": [{"message": {"content": null}}]}"#, "content"),
    ] {
        let server = Server::start(vec![Reply::raw(200, body), Reply::answer("never", "m")]).await;
        let err = failure(&server.client(), ErrorCode::Internal).await;
        assert!(err.cause().unwrap().to_string().contains(cause), "{err:?}");
        assert_eq!(server.calls(), 1, "a malformed answer is not retried here; the caller decides");
    }
}

#[tokio::test]
async fn an_oversize_answer_is_refused() {
    let big = Reply::answer(&"x".repeat(100_000), "m");
    let streamed = Reply {
        status: 200,
        headers: vec![],
        payload: Payload::Chunks { count: 100_000, size: 16 * 1024 },
        delay: Duration::ZERO,
    };
    for reply in [big, streamed] {
        let server = Server::start(vec![reply]).await;
        let mut config = server.config(Some(KEY));
        config.max_response_bytes = 64 * 1024;
        let start = Instant::now();
        let err = failure(&OpenAiCompatible::new(config).unwrap(), ErrorCode::Internal).await;
        assert!(err.message().contains("65536-byte limit"), "{err}");
        // The streamed body is 1.6 GB: refusing it means stopping early.
        assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
        assert_eq!(server.calls(), 1);
    }
}

#[tokio::test]
async fn a_slow_server_times_out_without_a_retry() {
    let mut slow = Reply::answer("too late", "m");
    slow.delay = Duration::from_secs(5);
    let server = Server::start(vec![slow, Reply::answer("never", "m")]).await;
    let mut config = server.config(Some(KEY));
    config.timeout = Duration::from_millis(300);
    let start = Instant::now();
    let err = failure(&OpenAiCompatible::new(config).unwrap(), ErrorCode::Internal).await;
    assert!(err.message().contains("did not answer within 0.3 s"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
    assert_eq!(server.calls(), 1);
}

#[tokio::test]
async fn an_unreachable_server_is_an_internal_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let mut config = EndpointConfig::new(parse_base_url(&base).unwrap(), None, "m".into());
    config.retry_backoff = Duration::from_millis(10);
    let err = failure(&OpenAiCompatible::new(config).unwrap(), ErrorCode::Internal).await;
    assert!(err.message().contains("Could not reach the model server"), "{err}");
}

/// The battle judge, end to end over HTTP: both orders asked, the served
/// model recorded in every verdict.
#[tokio::test]
async fn the_battle_judge_runs_over_the_client() {
    use lf_battle::{
        BattleService, BattleStatus, BattleTitle, ContenderType, DisplayName, MemoryBattleStore, NewBattle,
        NewContender, ScoreOutcome, SubmissionText, TaskPrompt,
    };
    use lf_core::{ContenderRefId, LenserId, Principal};

    let verdicts = json!({"verdicts": [
        {"contender": "A", "score": 90, "reasoning": "Clear."},
        {"contender": "B", "score": 40, "reasoning": "Vague."}
    ]})
    .to_string();
    let server = Server::start(vec![
        Reply::answer(&verdicts, "served-judge"),
        Reply::answer(&verdicts, "served-judge"),
    ])
    .await;
    let service =
        BattleService::new(Arc::new(MemoryBattleStore::new())).with_provider(Arc::new(server.client()));
    let me = Principal::Service { acting_as: Some(LenserId::new()) };
    let battle = service
        .create(
            &me,
            NewBattle::new(
                BattleTitle::parse("Explain ownership").unwrap(),
                TaskPrompt::parse("Explain Rust ownership to a Python programmer.").unwrap(),
            ),
        )
        .await
        .unwrap();
    let mut ids = Vec::new();
    for name in ["One", "Two"] {
        let new = NewContender {
            battle_id: battle.id,
            display_name: DisplayName::parse(name).unwrap(),
            contender_type: ContenderType::AiModel,
            reference: ContenderRefId::new(),
            slot: None,
            owner: None,
        };
        ids.push(service.add_contender(&me, new).await.unwrap().id);
    }
    service.set_status(&me, battle.id, BattleStatus::Open, false).await.unwrap();
    service.set_status(&me, battle.id, BattleStatus::Executing, false).await.unwrap();
    for (id, text) in ids.iter().zip(["Every value has one owner.", "Memory."]) {
        service.submit(&me, battle.id, *id, SubmissionText::parse(text).unwrap()).await.unwrap();
    }
    let ScoreOutcome::Scored(verdicts) = service.score(&me, battle.id).await.unwrap() else {
        panic!("expected verdicts")
    };
    assert_eq!(verdicts.len(), 2);
    assert!(
        verdicts.iter().all(|v| v.model == "served-judge" && v.position_consistent == Some(true)),
        "{verdicts:?}"
    );
    let best = verdicts.iter().max_by(|a, b| a.score.partial_cmp(&b.score).unwrap()).unwrap();
    assert_eq!(best.contender_id, ids[0]);
    assert_eq!(server.calls(), 2, "both orders asked");
    let seen = server.script.seen.lock().unwrap();
    assert!(
        seen.iter().all(|s| s.body["model"] == "test-model" && s.body["messages"][0]["role"] == "system")
    );
}

#[tokio::test]
async fn a_tool_calling_exchange_sends_the_tools_calls_and_results() {
    let asks = Reply::json(
        200,
        json!({
            "model": "test-model", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{"id": "call_7", "type": "function", "function": {"name": "get_lens", "arguments": "{\"lens_id\":\"L\"}"}}]
            }}],
            "usage": {"total_tokens": 30}
        }),
    );
    let server = Server::start(vec![asks, Reply::answer("The lens says hi.", "test-model")]).await;
    let client = server.client();
    let tools = vec![ToolSpec {
        name: "get_lens".into(),
        description: "Read a lens.".into(),
        parameters: r#"{"type":"object","properties":{"lens_id":{"type":"string"}},"required":["lens_id"]}"#
            .into(),
    }];
    let mut convo = ToolChatRequest { chat: request(), tools, turns: Vec::new() };
    let first = client.chat_with_tools(convo.clone()).await.unwrap();
    assert_eq!(first.text, "");
    assert_eq!(first.tokens, Some(30));
    assert_eq!(
        first.calls,
        vec![ToolCall {
            id: "call_7".into(),
            name: "get_lens".into(),
            arguments: r#"{"lens_id":"L"}"#.into()
        }]
    );
    convo.turns.push(Turn::Assistant { text: None, calls: first.calls.clone() });
    convo.turns.push(Turn::ToolResult { call_id: "call_7".into(), content: r#"{"title":"Hi"}"#.into() });
    let second = client.chat_with_tools(convo).await.unwrap();
    assert_eq!((second.text.as_str(), second.calls.len(), second.tokens), ("The lens says hi.", 0, Some(2)));

    let seen = server.script.seen.lock().unwrap();
    let tool = json!({"type": "function", "function": {"name": "get_lens", "description": "Read a lens.",
        "parameters": {"type": "object", "properties": {"lens_id": {"type": "string"}}, "required": ["lens_id"]}}});
    assert_eq!(seen[0].body["tools"], json!([tool]));
    assert_eq!(seen[0].body["messages"].as_array().unwrap().len(), 2);
    assert_eq!(
        seen[1].body["messages"],
        json!([
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Say hi."},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_7", "type": "function", "function": {"name": "get_lens", "arguments": "{\"lens_id\":\"L\"}"}}]},
            {"role": "tool", "tool_call_id": "call_7", "content": "{\"title\":\"Hi\"}"}
        ])
    );
}

#[tokio::test]
async fn tools_with_bad_parameters_are_refused_before_any_call() {
    let server = Server::start(vec![]).await;
    let tools = vec![ToolSpec { name: "x".into(), description: "d".into(), parameters: "{not json".into() }];
    let e = server
        .client()
        .chat_with_tools(ToolChatRequest { chat: request(), tools, turns: Vec::new() })
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e:?}");
    assert_eq!(server.calls(), 0);
}

#[tokio::test]
async fn the_offline_provider_calls_no_tool_and_names_itself() {
    let tools = vec![ToolSpec { name: "get_lens".into(), description: "d".into(), parameters: "{}".into() }];
    let mut chat = request();
    chat.stand_in = Some("offline answer".into());
    let answer = lf_model::OfflineProvider
        .chat_with_tools(ToolChatRequest { chat, tools, turns: Vec::new() })
        .await
        .unwrap();
    assert_eq!(
        (answer.text.as_str(), answer.calls.len(), answer.model.as_str()),
        ("offline answer", 0, lf_model::OFFLINE_MODEL_NAME)
    );
}

/// A resolver answering every name with 127.0.0.1, as a public name made to
/// point at the server's own loopback would.
struct Loopback;

#[async_trait::async_trait]
impl lf_egress::Resolver for Loopback {
    async fn resolve(&self, _host: &str) -> std::io::Result<Vec<std::net::IpAddr>> {
        Ok(vec![std::net::Ipv4Addr::LOCALHOST.into()])
    }
}

#[tokio::test]
async fn a_guarded_client_sends_nothing_to_an_address_the_egress_guard_refuses() {
    let server = Server::start(vec![Reply::answer("Hi.", "test-model")]).await;
    // The server's address, spelled as a name the resolver answers.
    let port = server.base.rsplit(':').next().unwrap().trim_end_matches("/v1").to_owned();
    let named = format!("http://models.example.com:{port}/v1");
    let config = || {
        let mut c = server.config(Some(KEY));
        c.base_url = parse_base_url(&named).unwrap();
        c
    };

    let refusing = lf_egress::guarded_dns(lf_egress::Allow::default(), Arc::new(Loopback));
    let client = OpenAiCompatible::guarded(config(), refusing).unwrap();
    let err = client.chat(request()).await.expect_err("the guard refuses loopback");
    assert_eq!(err.code(), ErrorCode::PermissionDenied, "{err:?}");
    assert!(err.message().contains("egress guard") && err.message().contains("loopback"), "{err}");
    assert!(err.message().contains("nothing was sent") && !err.message().contains(KEY), "{err}");
    assert_eq!(server.calls(), 0, "nothing reached the server");

    // Opened by the operator's allow-list, the same name is asked.
    let allow = lf_egress::Allow::parse("models.example.com").unwrap();
    let opened =
        OpenAiCompatible::guarded(config(), lf_egress::guarded_dns(allow, Arc::new(Loopback))).unwrap();
    assert_eq!(opened.chat(request()).await.unwrap().text, "Hi.");
    assert_eq!(server.calls(), 1);
}
