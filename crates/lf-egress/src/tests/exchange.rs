//! What an allowed request does: answers, redirects, limits, headers.

use std::time::Duration;

use crate::{
    Allow, EgressConfig, EgressError, EgressErrorKind, EgressRequest, HeaderName, HeaderValue, Method,
};

use super::{Net, Sink, test_config};

fn allowing_loopback(config: EgressConfig) -> EgressConfig {
    EgressConfig { allow: Allow::parse("127.0.0.1").unwrap(), ..config }
}

async fn loopback() -> Net {
    Net::with(allowing_loopback(test_config()), &[]).await
}

#[tokio::test]
async fn an_allowed_request_gets_its_answer() {
    let sink = Sink::start().await;
    let net = loopback().await;
    let answer = net.get(sink.url("/ok").as_str()).await.unwrap();
    assert_eq!((answer.status.as_u16(), answer.body.as_slice(), answer.redirects), (200, &b"hello"[..], 0));
    assert_eq!(answer.url, sink.url("/ok"));
    let answer = net.get(sink.url("/missing").as_str()).await.unwrap();
    assert_eq!(answer.status.as_u16(), 404, "a status is an answer, not an error");
    let seen = &sink.requests()[0];
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("GET", "/ok"));
    assert!(seen.header("user-agent").is_some_and(|ua| ua.starts_with("lenserfight/")));
    assert_eq!(sink.hits(), 2);
}

#[tokio::test]
async fn five_redirects_are_followed_and_a_sixth_is_refused() {
    let sink = Sink::start().await;
    let net = loopback().await;
    let answer = net.get(sink.url("/hop/5").as_str()).await.unwrap();
    assert_eq!((answer.body.as_slice(), answer.redirects), (&b"end"[..], 5));
    assert_eq!(answer.url, sink.url("/hop/0"));
    assert_eq!(sink.hits(), 6);

    let error = net.get(sink.url("/hop/6").as_str()).await.unwrap_err();
    assert_eq!(error.kind(), EgressErrorKind::Redirects, "{error}");
    assert!(
        error.to_string().contains("after 5 redirects") && error.to_string().contains("/hop/0"),
        "{error}"
    );
    assert_eq!(sink.hits(), 12, "the chain of six: the first URL and five redirects reached the sink");
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused() {
    let sink = Sink::start().await;
    let net =
        Net::with(allowing_loopback(EgressConfig { max_response_bytes: 40_000, ..test_config() }), &[]).await;
    assert_eq!(net.get(sink.url("/big/40000").as_str()).await.unwrap().body.len(), 40_000);
    for path in ["/big/40001", "/declared/40001"] {
        let error = net.get(sink.url(path).as_str()).await.unwrap_err();
        assert!(matches!(error, EgressError::TooLarge { limit: 40_000 }), "{path}: {error:?}");
        assert!(error.to_string().contains("40000-byte limit"), "{error}");
    }
}

#[tokio::test]
async fn a_slow_answer_times_out() {
    let sink = Sink::start().await;
    let config = EgressConfig { timeout: Duration::from_millis(200), ..test_config() };
    let net = Net::with(allowing_loopback(config), &[]).await;
    let error = net.get(sink.url("/slow").as_str()).await.unwrap_err();
    assert_eq!(error.kind(), EgressErrorKind::Timeout, "{error}");
    assert!(error.to_string().contains("0.2 s"), "{error}");
    assert_eq!(sink.hits(), 1);
}

#[tokio::test]
async fn the_idempotency_key_headers_and_body_arrive() {
    let sink = Sink::start().await;
    let net = loopback().await;
    let request = EgressRequest::new(Method::POST, sink.url("/ok"))
        .header(HeaderName::from_static("content-type"), HeaderValue::from_static("application/json"))
        .body(r#"{"a":1}"#)
        .idempotency_key("run-1/node-2/attempt-3");
    assert_eq!(net.egress.send(request).await.unwrap().status.as_u16(), 200);
    let seen = &sink.requests()[0];
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.header("idempotency-key"), Some("run-1/node-2/attempt-3"));
    assert_eq!(seen.header("content-type"), Some("application/json"));
    assert_eq!(seen.body, br#"{"a":1}"#);
}

#[tokio::test]
async fn redirects_keep_or_drop_the_body_as_their_status_says() {
    let sink = Sink::start().await;
    let net = loopback().await;
    let post =
        |path: &str| EgressRequest::new(Method::POST, sink.url(path)).body("payload").idempotency_key("k-1");
    net.egress.send(post("/redirect?status=303&to=/ok")).await.unwrap();
    net.egress.send(post("/redirect?status=307&to=/ok")).await.unwrap();
    net.egress.send(post("/redirect?status=302&to=/ok")).await.unwrap();
    let seen = sink.requests();
    let after: Vec<(&str, &[u8])> =
        [1, 3, 5].iter().map(|i| (seen[*i].method.as_str(), seen[*i].body.as_slice())).collect();
    assert_eq!(after, [("GET", &b""[..]), ("POST", &b"payload"[..]), ("GET", &b""[..])]);
    assert!(seen.iter().all(|s| s.header("idempotency-key") == Some("k-1")), "every hop carries the key");
}

#[tokio::test]
async fn credentials_stay_behind_when_a_redirect_leaves_the_origin() {
    let (first, second) = (Sink::start().await, Sink::start().await);
    let net = loopback().await;
    let to = second.url("/ok");
    let request = EgressRequest::get(first.url(&format!("/redirect?to={to}")))
        .header(HeaderName::from_static("authorization"), HeaderValue::from_static("Bearer secret"))
        .header(HeaderName::from_static("x-trace"), HeaderValue::from_static("t-1"));
    assert_eq!(net.egress.send(request).await.unwrap().url, to);
    assert_eq!(first.requests()[0].header("authorization"), Some("Bearer secret"));
    let there = &second.requests()[0];
    assert_eq!((there.header("authorization"), there.header("x-trace")), (None, Some("t-1")));

    let same_origin = EgressRequest::get(first.url("/redirect?to=/ok"))
        .header(HeaderName::from_static("authorization"), HeaderValue::from_static("Bearer secret"));
    net.egress.send(same_origin).await.unwrap();
    assert_eq!(first.requests()[2].header("authorization"), Some("Bearer secret"));
}

#[tokio::test]
async fn requests_that_are_never_sent() {
    let sink = Sink::start().await;
    let net = loopback().await;
    let host = EgressRequest::get(sink.url("/ok"))
        .header(HeaderName::from_static("host"), HeaderValue::from_static("internal.example"));
    let error = net.egress.send(host).await.unwrap_err();
    assert!(error.kind() == EgressErrorKind::Invalid && error.to_string().contains("Host"), "{error}");
    let key = EgressRequest::get(sink.url("/ok")).idempotency_key("line\nbreak");
    let error = net.egress.send(key).await.unwrap_err();
    assert!(
        error.kind() == EgressErrorKind::Invalid && error.to_string().contains("idempotency key"),
        "{error}"
    );
    assert_eq!(sink.hits(), 0);
}

#[tokio::test]
async fn a_refused_connection_is_an_http_error() {
    // A port nothing listens on: bind one, then let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let net = loopback().await;
    let error = net.get(&format!("http://127.0.0.1:{port}/private-path?token=t")).await.unwrap_err();
    assert_eq!(error.kind(), EgressErrorKind::Http, "{error}");
    assert!(error.to_string().contains("could not connect"), "{error}");
    assert!(!error.to_string().contains("private-path"), "no URL in the message: {error}");
}

#[test]
fn kinds_are_stable_words() {
    let words = [
        EgressErrorKind::Blocked,
        EgressErrorKind::Invalid,
        EgressErrorKind::Dns,
        EgressErrorKind::Redirects,
        EgressErrorKind::TooLarge,
        EgressErrorKind::Timeout,
        EgressErrorKind::Http,
    ]
    .map(EgressErrorKind::as_str);
    assert_eq!(
        words,
        ["blocked", "invalid_request", "dns", "too_many_redirects", "too_large", "timeout", "http"]
    );
}
