//! Fakes on 127.0.0.1, started inside each test: an HTTP server that
//! records every request and answers what the test tells it (it stands in
//! for a webhook sink, Slack, Discord, Telegram's Bot API, GitHub and a
//! feed), and an SMTP server that records every message.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Response, Uri};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// A listener on a free port of 127.0.0.1.
async fn loopback() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let addr = listener.local_addr().unwrap();
    (listener, addr)
}

/// One request as the fake saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    /// The path and query.
    pub path: String,
    /// Lowercase names; repeated headers joined by `, `.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

/// What the fake answers.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
    pub headers: Vec<(&'static str, String)>,
    /// How long it waits before answering.
    pub delay: Duration,
}

impl Reply {
    pub fn json(status: u16, body: serde_json::Value) -> Reply {
        Reply::text(status, &body.to_string()).typed("application/json")
    }

    pub fn text(status: u16, body: &str) -> Reply {
        Reply {
            status,
            content_type: "text/plain",
            body: body.to_owned(),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    pub fn typed(mut self, content_type: &'static str) -> Reply {
        self.content_type = content_type;
        self
    }

    pub fn with_header(mut self, name: &'static str, value: &str) -> Reply {
        self.headers.push((name, value.to_owned()));
        self
    }

    pub fn slow(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

#[derive(Default)]
struct Inner {
    seen: Mutex<Vec<Seen>>,
    reply: Mutex<Option<Reply>>,
}

/// An HTTP server on 127.0.0.1 that answers every request with its
/// current [`Reply`] (200 `ok` until told otherwise).
pub struct HttpFake {
    addr: SocketAddr,
    inner: Arc<Inner>,
}

impl HttpFake {
    pub async fn start() -> HttpFake {
        let (listener, addr) = loopback().await;
        let inner = Arc::new(Inner::default());
        let app = axum::Router::new().fallback(answer).with_state(inner.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.expect("the fake serves") });
        HttpFake { addr, inner }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn answer(&self, reply: Reply) {
        *self.inner.reply.lock().unwrap() = Some(reply);
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.inner.seen.lock().unwrap().clone()
    }

    /// The one request the fake saw since it started (or was cleared).
    pub fn one(&self) -> Seen {
        let seen = self.seen();
        assert_eq!(seen.len(), 1, "expected one request, saw {seen:#?}");
        seen.into_iter().next().unwrap()
    }

    pub fn clear(&self) {
        self.inner.seen.lock().unwrap().clear();
    }
}

async fn answer(
    State(inner): State<Arc<Inner>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let mut by_name: HashMap<String, String> = HashMap::new();
    for (name, value) in &headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        by_name.entry(name.as_str().to_owned()).and_modify(|v| *v = format!("{v}, {value}")).or_insert(value);
    }
    let path = uri.path_and_query().map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned());
    inner.seen.lock().unwrap().push(Seen {
        method: method.to_string(),
        path,
        headers: by_name,
        body: body.to_vec(),
    });
    let reply = inner.reply.lock().unwrap().clone().unwrap_or_else(|| Reply::text(200, "ok"));
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response = Response::builder().status(reply.status).header("content-type", reply.content_type);
    for (name, value) in &reply.headers {
        response = response.header(*name, value);
    }
    response.body(Body::from(reply.body)).unwrap()
}

/// One message as the SMTP fake took it.
#[derive(Clone, Debug)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    /// The message as sent after DATA (headers and body), dot-unstuffed.
    pub data: String,
}

#[derive(Default)]
struct SmtpInner {
    mails: Mutex<Vec<Mail>>,
    connections: Mutex<usize>,
    /// The answer to RCPT TO (`250 ok` unless told otherwise).
    rcpt: Mutex<Option<String>>,
}

/// A tiny SMTP server on 127.0.0.1: greets with 220 and takes EHLO, HELO,
/// MAIL, RCPT, DATA, RSET, NOOP and QUIT, in clear.
pub struct SmtpFake {
    addr: SocketAddr,
    inner: Arc<SmtpInner>,
}

impl SmtpFake {
    pub async fn start() -> SmtpFake {
        let (listener, addr) = loopback().await;
        let inner = Arc::new(SmtpInner::default());
        let serving = inner.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                *serving.connections.lock().unwrap() += 1;
                tokio::spawn(session(stream, serving.clone()));
            }
        });
        SmtpFake { addr, inner }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// What RCPT TO is answered with from now on (`550 5.1.1 no such user`).
    pub fn answer_rcpt(&self, line: &str) {
        *self.inner.rcpt.lock().unwrap() = Some(line.to_owned());
    }

    pub fn mails(&self) -> Vec<Mail> {
        self.inner.mails.lock().unwrap().clone()
    }

    pub fn connections(&self) -> usize {
        *self.inner.connections.lock().unwrap()
    }
}

async fn session(stream: tokio::net::TcpStream, inner: Arc<SmtpInner>) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    write.write_all(b"220 fake.test ESMTP ready\r\n").await?;
    let (mut from, mut to) = (String::new(), Vec::new());
    while let Some(line) = lines.next_line().await? {
        let upper = line.to_ascii_uppercase();
        let reply = if upper.starts_with("EHLO") || upper.starts_with("HELO") {
            "250 fake.test".to_owned()
        } else if upper.starts_with("MAIL FROM:") {
            from = address(&line["MAIL FROM:".len()..]);
            "250 2.1.0 ok".to_owned()
        } else if upper.starts_with("RCPT TO:") {
            let answer = inner.rcpt.lock().unwrap().clone().unwrap_or_else(|| "250 2.1.5 ok".to_owned());
            if answer.starts_with('2') {
                to.push(address(&line["RCPT TO:".len()..]));
            }
            answer
        } else if upper == "DATA" {
            write.write_all(b"354 end with <CRLF>.<CRLF>\r\n").await?;
            let mut data = String::new();
            while let Some(l) = lines.next_line().await? {
                if l == "." {
                    break;
                }
                data.push_str(l.strip_prefix('.').filter(|_| l.starts_with("..")).unwrap_or(&l));
                data.push_str("\r\n");
            }
            let mail = Mail { from: std::mem::take(&mut from), to: std::mem::take(&mut to), data };
            inner.mails.lock().unwrap().push(mail);
            "250 2.0.0 queued".to_owned()
        } else if upper == "RSET" || upper == "NOOP" {
            "250 2.0.0 ok".to_owned()
        } else if upper == "QUIT" {
            write.write_all(b"221 2.0.0 bye\r\n").await?;
            return Ok(());
        } else {
            "502 5.5.2 not implemented".to_owned()
        };
        write.write_all(format!("{reply}\r\n").as_bytes()).await?;
    }
    Ok(())
}

/// The address of `<a@b> PARAMS`.
fn address(rest: &str) -> String {
    let rest = rest.trim();
    let end = rest.find('>').map_or(rest.len(), |i| i + 1);
    rest[..end].trim_matches(['<', '>']).to_owned()
}
