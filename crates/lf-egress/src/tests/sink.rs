//! A small HTTP/1.1 server on 127.0.0.1 that counts every connection that
//! reaches it and records every request. One answer per connection, then
//! the connection closes. What it answers depends on the path:
//!
//! - `/ok`: 200, `hello`;
//! - `/hop/N`: a 302 to `/hop/N-1`, and 200 `end` at 0;
//! - `/redirect?status=S&to=URL`: an S (302 when absent) to URL;
//! - `/big/N`: N bytes, chunked, no Content-Length;
//! - `/declared/N`: N bytes with their Content-Length;
//! - `/slow`: never answers;
//! - anything else: 404.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

/// One request as the sink read it.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) path: String,
    headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Seen {
    /// The value of a header, by its name in lower case.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Counts {
    connections: AtomicUsize,
    requests: Mutex<Vec<Seen>>,
}

pub(crate) struct Sink {
    addr: SocketAddr,
    counts: Arc<Counts>,
}

impl Sink {
    pub(crate) async fn start() -> Sink {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("a port on 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let counts = Arc::new(Counts::default());
        let serving = counts.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                serving.connections.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(stream, serving.clone()));
            }
        });
        Sink { addr, counts }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:<port><path>`.
    pub(crate) fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://{}{path}", self.addr)).unwrap()
    }

    /// The connections that reached the sink.
    pub(crate) fn hits(&self) -> usize {
        self.counts.connections.load(Ordering::SeqCst)
    }

    pub(crate) fn requests(&self) -> Vec<Seen> {
        self.counts.requests.lock().unwrap().clone()
    }
}

async fn serve(mut stream: TcpStream, counts: Arc<Counts>) {
    let Some(seen) = read_request(&mut stream).await else { return };
    counts.requests.lock().unwrap().push(seen.clone());
    let Some(answer) = answer(&seen.path) else {
        // `/slow`: hold the connection until the client gives up.
        std::future::pending::<()>().await;
        return;
    };
    // The client may hang up early (an answer too large); that is its right.
    let _ = stream.write_all(&answer).await;
    let _ = stream.shutdown().await;
}

async fn read_request(stream: &mut TcpStream) -> Option<Seen> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut buf).await.ok().filter(|n| *n > 0)?;
        data.extend_from_slice(&buf[..n]);
        if data.len() > 64 * 1024 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let (method, path) = (request_line.next()?.to_owned(), request_line.next()?.to_owned());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).await.ok().filter(|n| *n > 0)?;
        body.extend_from_slice(&buf[..n]);
    }
    Some(Seen { method, path, headers, body })
}

/// The bytes to answer `path` with; `None` for never.
fn answer(path: &str) -> Option<Vec<u8>> {
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    let param = |key: &str| {
        query.split('&').find_map(|kv| kv.strip_prefix(key).and_then(|rest| rest.strip_prefix('=')))
    };
    let number = |prefix: &str| route.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok());
    Some(if route == "/ok" {
        plain(200, "hello")
    } else if let Some(n) = number("/hop/") {
        if n == 0 { plain(200, "end") } else { redirect(302, &format!("/hop/{}", n - 1)) }
    } else if route == "/redirect" {
        let status = param("status").and_then(|s| s.parse().ok()).unwrap_or(302);
        redirect(status, param("to").unwrap_or("/ok"))
    } else if let Some(n) = number("/big/") {
        let mut out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
        let mut left = n;
        while left > 0 {
            let size = left.min(16 * 1024);
            out.extend_from_slice(format!("{size:x}\r\n").as_bytes());
            out.extend(std::iter::repeat_n(b'x', size));
            out.extend_from_slice(b"\r\n");
            left -= size;
        }
        out.extend_from_slice(b"0\r\n\r\n");
        out
    } else if let Some(n) = number("/declared/") {
        plain(200, &"x".repeat(n))
    } else if route == "/slow" {
        return None;
    } else {
        plain(404, "not here")
    })
}

fn plain(status: u16, body: &str) -> Vec<u8> {
    format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
        .into_bytes()
}

fn redirect(status: u16, location: &str) -> Vec<u8> {
    format!("HTTP/1.1 {status} X\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        .into_bytes()
}
