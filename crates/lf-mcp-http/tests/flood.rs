//! Slow request bodies through the built binary on loopback: a flood of
//! connections that send their bodies a byte at a time from two addresses
//! must leave `/health` quick and another address's `tools/call` answered;
//! a body slower than the minimum rate is answered 408; a declared length
//! over the limit is answered 413 at once; a webhook call without the
//! secret is refused before its body is read.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

#[path = "common/process.rs"]
mod process;

use process::{Home, Served};

/// Longer than any answer under test needs, shorter than the server's
/// request timeout (20 s): a request left waiting for a body fails here.
const PATIENCE: Duration = Duration::from_secs(6);
const PER_CLIENT: usize = 20;
const GLOBAL: usize = 30;
/// Connections of the flood from each of its two addresses.
const FLOOD: usize = 30;

/// The binary serving on a loopback port, and the home it serves from.
struct Flooded {
    _served: Served,
    addr: SocketAddr,
    _home: Home,
}

/// The binary serving on a free loopback port, with the caps under test,
/// a body grace of 2 s at 1 byte a second, and a development lenser so
/// that a tool call needs no token.
async fn serve() -> Flooded {
    let home = Home::new();
    home.admin(&["create-lenser", "--handle", "dev_user"], "a long enough password\n", &[], &mut Vec::new());
    let (global, per_client) = (GLOBAL.to_string(), PER_CLIENT.to_string());
    let served = home.serve(
        &[],
        &[
            ("LENSERFIGHT_DEV_LENSER", "dev_user"),
            ("LENSERFIGHT_MAX_CONNECTIONS", &global),
            ("LENSERFIGHT_MAX_CONNECTIONS_PER_CLIENT", &per_client),
            ("LENSERFIGHT_BODY_GRACE", "2"),
            ("LENSERFIGHT_MIN_BODY_RATE", "1"),
            ("LENSERFIGHT_REQUEST_TIMEOUT", "20"),
        ],
    );
    let addr = served.base.trim_start_matches("http://").parse().unwrap();
    Flooded { _served: served, addr, _home: home }
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
