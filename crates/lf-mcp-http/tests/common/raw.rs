//! HTTP/1.1 spoken by hand over TCP, for what an ordinary client never
//! sends: slow or partial requests, absolute-form targets, odd headers.

use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

use super::Server;

/// Long enough for anything a test waits for; the timeouts under test are
/// 1 or 2 seconds.
pub const PATIENCE: Duration = Duration::from_secs(8);

pub async fn connect(s: &Server) -> TcpStream {
    TcpStream::connect(s.addr).await.unwrap()
}

/// Reads until the server closes the connection (or `PATIENCE` runs out:
/// `None`); what it sent.
pub async fn until_closed(tcp: &mut TcpStream) -> Option<String> {
    let mut got = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(PATIENCE, read).await.ok()?;
    Some(String::from_utf8_lossy(&got).into_owned())
}

/// Reads one whole answer to a request (headers and a Content-Length body).
pub async fn answer(tcp: &mut TcpStream) -> String {
    let read = async {
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
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(0);
                if got.len() >= end + 4 + length {
                    return text;
                }
            }
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "the connection closed before the answer was complete: {text:?}");
            got.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(PATIENCE, read).await.expect("an answer")
}
