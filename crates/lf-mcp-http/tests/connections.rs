//! Connections as a slow or hostile client holds them, over raw TCP: the
//! header and idle timeouts, the cap on open connections, and the shutdown
//! timeout, each set short (seconds) or small for the test.

mod common;

use std::time::Duration;

use common::raw::{PATIENCE, answer, connect, until_closed};
use common::{Options, Server};
use lf_mcp_http::ServeArgs;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start(serve: fn(&mut ServeArgs)) -> Server {
    Server::with(Options { serve: Some(serve), ..Options::default() }).await
}

const HEALTH: &[u8] = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// A registration whose body is announced but not all sent.
const HALF_POST: &[u8] =
    b"POST /oauth/register HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n\
expect: 100-continue\r\ncontent-length: 41\r\n\r\n{\"redirect_uris\":";
const REST_OF_POST: &[u8] = b"[\"http://127.0.0.1/cb\"]}";

/// Sends [`HALF_POST`] and waits until the server reads its body (it asks
/// for it with `100 Continue`): a request in flight until the rest comes.
async fn in_flight(s: &Server) -> TcpStream {
    let mut tcp = connect(s).await;
    tcp.write_all(HALF_POST).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    let read = async {
        while !String::from_utf8_lossy(&got).contains("100 Continue\r\n\r\n") {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed before the body was asked for");
            got.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(PATIENCE, read).await.expect("the body is asked for");
    tcp
}

/// Sends `bytes` one at a time, 5 a second, until the server closes.
async fn drip(tcp: &mut TcpStream, bytes: &[u8]) -> Option<String> {
    let (mut read, mut write) = tcp.split();
    let closed = async {
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        loop {
            match read.read(&mut buf).await {
                Ok(0) | Err(_) => return String::from_utf8_lossy(&got).into_owned(),
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    let dripping = async {
        for b in bytes.iter().cycle() {
            if write.write_all(&[*b]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        std::future::pending::<()>().await;
    };
    tokio::time::timeout(PATIENCE, async {
        tokio::select! {
            got = closed => got,
            () = dripping => unreachable!(),
        }
    })
    .await
    .ok()
}

#[tokio::test]
async fn headers_must_arrive_within_the_header_timeout() {
    let s = start(|a| {
        a.header_timeout = 1;
        a.idle_timeout = 30;
    })
    .await;
    // A socket that sends nothing.
    let mut silent = connect(&s).await;
    assert_eq!(until_closed(&mut silent).await.as_deref(), Some(""), "a silent socket is closed");

    // Headers sent a byte at a time never make a request.
    let mut slow = connect(&s).await;
    assert_eq!(
        drip(&mut slow, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: aaaa").await.as_deref(),
        Some("")
    );

    // On a kept-alive connection the timeout counts from the next head's
    // first byte, not the idle timeout.
    let mut kept = connect(&s).await;
    kept.write_all(HEALTH).await.unwrap();
    assert!(answer(&mut kept).await.starts_with("HTTP/1.1 200"));
    assert_eq!(drip(&mut kept, b"GET /health HTTP/1.1\r\nX-Pad: aaaa").await.as_deref(), Some(""));

    // A request sent at once is answered.
    let mut quick = connect(&s).await;
    quick.write_all(HEALTH).await.unwrap();
    assert!(answer(&mut quick).await.starts_with("HTTP/1.1 200"));
    s.stop().await;
}

#[tokio::test]
async fn idle_kept_alive_connections_are_closed_after_the_idle_timeout() {
    let s = start(|a| {
        a.header_timeout = 30;
        a.idle_timeout = 1;
    })
    .await;
    let mut kept = connect(&s).await;
    for _ in 0..2 {
        kept.write_all(HEALTH).await.unwrap();
        assert!(answer(&mut kept).await.starts_with("HTTP/1.1 200"));
    }
    assert_eq!(until_closed(&mut kept).await.as_deref(), Some(""), "closed once idle");

    // A request in flight is not idle: its body may come later than the
    // idle timeout.
    let mut busy = in_flight(&s).await;
    let open = tokio::time::timeout(Duration::from_secs(2), until_closed(&mut busy)).await;
    assert!(open.is_err(), "still open after twice the idle timeout: {open:?}");
    busy.write_all(REST_OF_POST).await.unwrap();
    assert!(answer(&mut busy).await.starts_with("HTTP/1.1 201"), "the request in flight is answered");
    s.stop().await;
}

#[tokio::test]
async fn at_the_cap_idle_connections_and_slow_senders_make_room() {
    let s = start(|a| {
        a.max_connections = 2;
        a.header_timeout = 30;
        a.idle_timeout = 30;
    })
    .await;
    // Idle sockets at the cap do not keep /health out: the idlest is closed.
    let mut idle = [connect(&s).await, connect(&s).await];
    let mut health = connect(&s).await;
    health.write_all(HEALTH).await.unwrap();
    assert!(answer(&mut health).await.starts_with("HTTP/1.1 200"));
    assert_eq!(until_closed(&mut idle[0]).await.as_deref(), Some(""), "the idlest was closed");
    drop(health);

    // Connections still sending their request's body make room too, the
    // oldest first, before idle ones: slow senders cannot keep /health out.
    let mut sending = [in_flight(&s).await, in_flight(&s).await];
    let mut health = connect(&s).await;
    health.write_all(HEALTH).await.unwrap();
    assert!(answer(&mut health).await.starts_with("HTTP/1.1 200"));
    assert!(until_closed(&mut sending[0]).await.is_some(), "the oldest sender was closed");
    sending[1].write_all(REST_OF_POST).await.unwrap();
    assert!(answer(&mut sending[1]).await.starts_with("HTTP/1.1 201"), "the other one is served");
    s.stop().await;
}

#[tokio::test]
async fn stopping_finishes_requests_in_flight_then_drops_the_rest_at_the_shutdown_timeout() {
    let s = start(|a| {
        a.header_timeout = 30;
        a.shutdown_timeout = 2;
    })
    .await;
    let address = s.addr;
    let mut half_head = connect(&s).await;
    half_head.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").await.unwrap();
    let mut finishing = in_flight(&s).await;
    let mut stuck = in_flight(&s).await;
    let mut idle = connect(&s).await;
    idle.write_all(HEALTH).await.unwrap();
    assert!(answer(&mut idle).await.starts_with("HTTP/1.1 200"));

    let stopping = tokio::spawn(s.stop());
    // Once the listener is closed the server is draining.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while TcpStream::connect(address).await.is_ok() {
        assert!(tokio::time::Instant::now() < deadline, "the server still accepts connections");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(until_closed(&mut idle).await.as_deref(), Some(""), "an idle connection closes at once");
    finishing.write_all(REST_OF_POST).await.unwrap();
    assert!(answer(&mut finishing).await.starts_with("HTTP/1.1 201"), "a request in flight is finished");
    // The server stops (within Server::stop's patience) although two
    // connections never complete their requests.
    stopping.await.unwrap();
    assert!(until_closed(&mut half_head).await.is_some());
    assert!(until_closed(&mut stuck).await.is_some());
}

/// A request refused before its body is read (here 401, with the body not
/// sent yet) is answered with `Connection: close`, and the connection is
/// closed: a client that reused it would find it closed under its next
/// request.
#[tokio::test]
async fn a_request_answered_before_its_body_is_read_says_the_connection_closes() {
    let s = start(|_| {}).await;
    let mut tcp = connect(&s).await;
    tcp.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 45\r\n\r\n",
    )
    .await
    .unwrap();
    let refused = answer(&mut tcp).await;
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert!(refused.to_ascii_lowercase().contains("\r\nconnection: close\r\n"), "{refused}");
    assert!(until_closed(&mut tcp).await.is_some(), "closed");

    // A request whose body was read keeps its connection.
    let mut kept = in_flight(&s).await;
    kept.write_all(REST_OF_POST).await.unwrap();
    let created = answer(&mut kept).await;
    assert!(
        created.starts_with("HTTP/1.1 201") && !created.to_ascii_lowercase().contains("connection: close")
    );
    kept.write_all(HEALTH).await.unwrap();
    assert!(answer(&mut kept).await.starts_with("HTTP/1.1 200"));
    s.stop().await;
}
