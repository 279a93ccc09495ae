//! Slow request bodies through the built binary on loopback: a flood of
//! connections that send their bodies a byte at a time from two addresses
//! must leave `/health` quick and another address's `tools/call` answered;
//! a body slower than the minimum rate is answered 408; a declared length
//! over the limit is answered 413 at once; a webhook call without the
//! secret is refused before its body is read.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const BIN: &str = env!("CARGO_BIN_EXE_lf-mcp-http");
/// Longer than any answer under test needs, shorter than the server's
/// request timeout (20 s): a request left waiting for a body fails here.
const PATIENCE: Duration = Duration::from_secs(6);
const PER_CLIENT: usize = 20;
const GLOBAL: usize = 30;
/// Connections of the flood from each of its two addresses.
const FLOOD: usize = 30;

struct Served {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(dir: &tempfile::TempDir) -> Command {
    let mut command = Command::new(BIN);
    command
        .env_remove("LENSERFIGHT_CONFIG")
        .env_remove("LENSERFIGHT_SECRET_KEY")
        .env("LENSERFIGHT_DATABASE_URL", format!("sqlite://{}", dir.path().join("lf.db").display()))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_DATA_HOME", dir.path().join("data"));
    command
}

/// The binary serving on a free loopback port, with the caps under test,
/// a body grace of 2 s at 1 byte a second, and a development lenser so
/// that a tool call needs no token.
async fn serve() -> Served {
    let dir = tempfile::tempdir().unwrap();
    let mut admin = command(&dir)
        .args(["admin", "create-lenser", "--handle", "dev_user"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    admin.stdin.take().unwrap().write_all(b"a long enough password\n").unwrap();
    assert!(admin.wait().unwrap().success());
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
    let child = command(&dir)
        .env("LENSERFIGHT_BIND", addr.to_string())
        .env("LENSERFIGHT_DEV_LENSER", "dev_user")
        .env("LENSERFIGHT_MAX_CONNECTIONS", GLOBAL.to_string())
        .env("LENSERFIGHT_MAX_CONNECTIONS_PER_CLIENT", PER_CLIENT.to_string())
        .env("LENSERFIGHT_BODY_GRACE", "2")
        .env("LENSERFIGHT_MIN_BODY_RATE", "1")
        .env("LENSERFIGHT_REQUEST_TIMEOUT", "20")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let served = Served { child, addr, _dir: dir };
    let started = Instant::now();
    while TcpStream::connect(addr).await.is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "the server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    served
}

/// A connection to the server from the loopback address `from`.
async fn connect(from: &str, to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from.parse::<IpAddr>().unwrap(), 0))?;
    socket.connect(to).await
}

/// Sends `request` on a new connection from `from`; the whole answer,
/// read until the server closes the connection or the answer's length is
/// in. Fails after [`PATIENCE`].
async fn exchange(from: &str, to: SocketAddr, request: &str) -> String {
    let go = async {
        let mut tcp = connect(from, to).await.unwrap();
        tcp.write_all(request.as_bytes()).await.unwrap();
        read_answer(&mut tcp).await
    };
    tokio::time::timeout(PATIENCE, go).await.unwrap_or_else(|_| panic!("no answer to {request:?}"))
}

async fn read_answer(tcp: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned())
                })
                .and_then(|v| v.parse::<usize>().ok());
            if length.is_some_and(|n| got.len() >= end + 4 + n) {
                return text;
            }
        }
        match tcp.read(&mut buf).await {
            Ok(0) | Err(_) => return text,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

fn post(path: &str, addr: SocketAddr, length: u64, extra: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}Content-Length: {length}\r\n\r\n"
    )
}

/// One connection of the flood, for ever: a `/mcp` request declaring
/// 100,000 bytes of body, sent two bytes a second (over the minimum rate,
/// under any use); when the server closes it, another.
async fn flood_one(from: &'static str, to: SocketAddr) {
    loop {
        if let Ok(mut tcp) = connect(from, to).await
            && tcp.write_all(post("/mcp", to, 100_000, "").as_bytes()).await.is_ok()
        {
            while tcp.write_all(b" ").await.is_ok() {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_slow_bodies_leaves_health_quick_and_others_served() {
    let s = serve().await;
    let addr = s.addr;
    let flood: Vec<_> = (0..FLOOD)
        .flat_map(|_| {
            [tokio::spawn(flood_one("127.0.0.1", addr)), tokio::spawn(flood_one("127.0.0.3", addr))]
        })
        .collect();
    // Every flood connection open and sending its body.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let mut latencies = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let answer =
            exchange("127.0.0.1", addr, &format!("GET /health HTTP/1.1\r\nHost: {addr}\r\n\r\n")).await;
        latencies.push(started.elapsed());
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let call =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_lenses","arguments":{}}}"#;
    let mut request = post("/mcp", addr, call.len() as u64, "");
    request.push_str(call);
    let answer = exchange("127.0.0.2", addr, &request).await;
    assert!(answer.starts_with("HTTP/1.1 200") && answer.contains(r#""result""#), "{answer}");

    latencies.sort();
    let (median, max) = (latencies[latencies.len() / 2], latencies[latencies.len() - 1]);
    eprintln!("/health under the flood: median {median:?}, max {max:?}");
    assert!(median < Duration::from_millis(100), "median {median:?}, all {latencies:?}");
    assert!(max < Duration::from_secs(1), "all {latencies:?}");
    for task in flood {
        task.abort();
    }
}

#[tokio::test]
async fn a_body_slower_than_the_rate_gets_408_and_a_declared_excess_413_at_once() {
    let s = serve().await;
    let addr = s.addr;
    // One byte, then nothing: behind 1 byte a second once the grace is over.
    let slow = async {
        let mut tcp = connect("127.0.0.4", addr).await.unwrap();
        tcp.write_all(post("/mcp", addr, 1000, "").as_bytes()).await.unwrap();
        tcp.write_all(b"{").await.unwrap();
        read_answer(&mut tcp).await
    };
    let answer = tokio::time::timeout(PATIENCE, slow).await.expect("a 408 after the grace");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");

    let hook = format!("/hooks/{}", lf_core::WorkflowId::new());
    for path in ["/mcp", hook.as_str(), "/oauth/token"] {
        let answer = exchange("127.0.0.5", addr, &post(path, addr, 1_000_000_000_000, "")).await;
        assert!(answer.starts_with("HTTP/1.1 413"), "{path}: {answer}");
        assert!(answer.contains(r#""error":"payload_too_large""#), "{path}: {answer}");
    }
    // Within the limit, but no secret: refused before the body is read.
    let answer =
        exchange("127.0.0.5", addr, &post(&hook, addr, 100_000, "X-Webhook-Secret: lfwh_guess\r\n")).await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
}
