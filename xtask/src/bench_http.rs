//! `bench-http`: authenticated `tools/call` of get_lens and run_lens over
//! HTTP against the release lf-mcp-http on SQLite (10,000 lenses), the
//! server pinned to core 0 and this load generator to core 1; requests/s
//! and p50/p99 latency at 1, 8 and 64 connections (keep-alive HTTP/1.1, one
//! request at a time per connection). Every response is checked. With
//! `--baseline`, each level is also run against a bare rmcp echo server on
//! the same core (the yardstick the aims are set against), right after.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use lf_core::LensId;

use crate::bench::{
    Calls, arg_usize, echo_binary, percentile, pin_this_process, seed, server_binary, server_command, workdir,
};

/// Whether the answer is HTTP 200 with a successful answer to request `id`.
fn check(kind: Calls, status: hyper::StatusCode, bytes: &[u8], id: u64) -> Result<(), String> {
    if status != hyper::StatusCode::OK {
        return Err(format!("a call failed: HTTP {status}: {}", String::from_utf8_lossy(bytes)));
    }
    if kind.check(bytes)? != id {
        return Err(format!("the answer to another request: {}", String::from_utf8_lossy(bytes)));
    }
    Ok(())
}

/// One keep-alive connection sending requests one after another until
/// `next` passes `total`; the latency of each.
async fn connection(
    kind: Calls,
    addr: String,
    token: Arc<str>,
    ids: Arc<Vec<LensId>>,
    next: Arc<AtomicU64>,
    total: u64,
) -> Result<Vec<Duration>, String> {
    let stream = tokio::net::TcpStream::connect(&addr).await.map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let mut times = Vec::new();
    let auth = format!("Bearer {token}");
    loop {
        let id = next.fetch_add(1, Ordering::Relaxed);
        if id > total {
            return Ok(times);
        }
        let request = hyper::Request::post("/mcp")
            .header("host", &addr)
            .header("authorization", &auth)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            // As a client sends it after initializing.
            .header("mcp-protocol-version", "2025-11-25")
            .body(Full::new(Bytes::from(kind.request(id, &ids))))
            .map_err(|e| e.to_string())?;
        let started = Instant::now();
        let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
        let status = response.status();
        let bytes = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
        times.push(started.elapsed());
        check(kind, status, &bytes, id)?;
    }
}

/// CPU time (user + system) process `pid` has used so far, from /proc.
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // Linux reports clock ticks of 1/100 s (USER_HZ).
    Some(Duration::from_millis(ticks * 10))
}

/// Runs `total` requests over `connections` connections; (requests/s, sorted latencies).
async fn level(
    kind: Calls,
    addr: &str,
    token: &Arc<str>,
    ids: &Arc<Vec<LensId>>,
    connections: usize,
    total: u64,
) -> Result<(f64, Vec<Duration>), String> {
    let next = Arc::new(AtomicU64::new(1));
    let started = Instant::now();
    let tasks: Vec<_> = (0..connections)
        .map(|_| {
            tokio::spawn(connection(kind, addr.to_owned(), token.clone(), ids.clone(), next.clone(), total))
        })
        .collect();
    let mut times = Vec::with_capacity(total as usize);
    for t in tasks {
        times.extend(t.await.map_err(|e| e.to_string())??);
    }
    let elapsed = started.elapsed();
    if times.len() as u64 != total {
        return Err(format!("{} of {total} requests answered", times.len()));
    }
    times.sort();
    Ok((total as f64 / elapsed.as_secs_f64(), times))
}

pub fn run(args: &[String], root: &Path) -> Result<(), String> {
    let n = arg_usize(args, "--lenses", 10_000);
    let total = arg_usize(args, "--requests", 20_000) as u64;
    let bin = server_binary(args, root, "lf-mcp-http")?;
    let echo = echo_binary(args, root)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let dir = workdir("bench-http");
        let url = format!("sqlite://{}", dir.join("bench.db").display());
        let db = lf_store::Database::connect(&url).await.map_err(|e| e.to_string())?;
        eprintln!("seeding {n} lenses into {url}");
        let ids = Arc::new(seed(db.lens_store(), n).await);
        db.close().await;
        let admin = |args: &[&str], input: &str| -> Result<String, String> {
            let mut child = std::process::Command::new(&bin)
                .args(args)
                .env("LENSERFIGHT_DATABASE_URL", &url)
                .env("LENSERFIGHT_LOG", "warn")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .map_err(|e| e.to_string())?;
            use std::io::Write;
            child.stdin.take().unwrap().write_all(input.as_bytes()).map_err(|e| e.to_string())?;
            let out = child.wait_with_output().map_err(|e| e.to_string())?;
            if !out.status.success() {
                return Err(format!("lf-mcp-http {args:?} failed"));
            }
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        };
        admin(&["admin", "create-lenser", "--handle", "bench"], "bench password 1234\n")?;
        let token: Arc<str> = admin(&["admin", "issue-token", "--handle", "bench"], "")?.into();
        let addr = free_address()?;
        let mut server = server_command(&bin)
            .args(["serve", "--bind", &addr])
            .env("LENSERFIGHT_DATABASE_URL", &url)
            .env("LENSERFIGHT_LOG", "warn")
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", bin.display()))?;
        let mut yardstick = match &echo {
            None => None,
            Some(echo) => {
                let addr = free_address()?;
                let child = server_command(echo)
                    .args(["--bind", &addr])
                    .kill_on_drop(true)
                    .spawn()
                    .map_err(|e| format!("starting {}: {e}", echo.display()))?;
                Some((child, addr))
            }
        };
        wait_for(&addr).await;
        if let Some((_, addr)) = &yardstick {
            wait_for(addr).await;
        }
        pin_this_process(1);
        // Warm the caches and the connection pool paths.
        level(Calls::Lenses, &addr, &token, &ids, 8, 2_000).await?;
        if let Some((_, addr)) = &yardstick {
            level(Calls::Echo, addr, &token, &ids, 8, 2_000).await?;
        }
        println!(
            "http: {total} authenticated tools/call (get_lens and run_lens alternating) per level over {n} lenses on SQLite, server on one core:"
        );
        for connections in [1, 8, 64] {
            let line = measure(Calls::Lenses, &server, &addr, &token, &ids, connections, total).await?;
            println!("  {connections:>2} connections: {line}");
            if let Some((echo, addr)) = &yardstick {
                let line = measure(Calls::Echo, echo, addr, &token, &ids, connections, total).await?;
                println!("  {:>2}   rmcp bare echo: {line}", "");
            }
        }
        let _ = server.start_kill();
        let _ = server.wait().await;
        if let Some((echo, _)) = &mut yardstick {
            let _ = echo.start_kill();
            let _ = echo.wait().await;
        }
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    })
}

/// A loopback address with a port free right now.
fn free_address() -> Result<String, String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    Ok(format!("127.0.0.1:{port}"))
}

/// Waits (up to 10 s) until `addr` accepts connections.
async fn wait_for(addr: &str) {
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One level against `server`, as the line printed: requests/s, p50, p99
/// and the server's CPU time per request.
async fn measure(
    kind: Calls,
    server: &tokio::process::Child,
    addr: &str,
    token: &Arc<str>,
    ids: &Arc<Vec<LensId>>,
    connections: usize,
    total: u64,
) -> Result<String, String> {
    let pid = server.id().ok_or("the server exited")?;
    let cpu_before = cpu_time(pid);
    let (rate, times) = level(kind, addr, token, ids, connections, total).await?;
    let cpu = match (cpu_before, cpu_time(pid)) {
        (Some(a), Some(b)) => {
            format!("  server CPU {:>5.1} µs/request", (b - a).as_secs_f64() * 1e6 / total as f64)
        }
        _ => String::new(),
    };
    Ok(format!(
        "{rate:>8.0} requests/s  p50 {:>7.3} ms  p99 {:>7.3} ms{cpu}",
        percentile(&times, 0.50).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3,
    ))
}
