//! `bench-http`: authenticated `tools/call` of get_lens and run_lens over
//! HTTP against the release lf-mcp-http on SQLite (10,000 lenses), the
//! server pinned to core 0 and this load generator to core 1; requests/s
//! and p50/p99 latency at 1, 8 and 64 connections (keep-alive HTTP/1.1, one
//! request at a time per connection). Every response is checked.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use lf_core::LensId;
use serde_json::{Value, json};

use crate::bench::{arg_usize, percentile, pin_this_process, seed, server_binary, server_command, workdir};

fn body(id: u64, lens: &LensId) -> Bytes {
    let call = if id.is_multiple_of(2) {
        json!({"name": "get_lens", "arguments": {"lens_id": lens.to_string()}})
    } else {
        json!({"name": "run_lens", "arguments": {"lens_id": lens.to_string(), "param_values": {"Topic": "tides", "Audience": "kids"}}})
    };
    Bytes::from(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": call}).to_string())
}

fn check(status: hyper::StatusCode, bytes: &[u8], id: u64) -> Result<(), String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("HTTP {status}, not JSON: {e}"))?;
    if status != hyper::StatusCode::OK
        || v["id"] != id
        || v["result"]["isError"] != false
        || !v["result"]["structuredContent"].is_object()
    {
        return Err(format!("a call failed: HTTP {status}: {v}"));
    }
    Ok(())
}

/// One keep-alive connection sending requests one after another until
/// `next` passes `total`; the latency of each.
async fn connection(
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
        let lens = &ids[(id as usize * 7919) % ids.len()];
        let request = hyper::Request::post("/mcp")
            .header("host", &addr)
            .header("authorization", &auth)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            // As a client sends it after initializing.
            .header("mcp-protocol-version", "2025-11-25")
            .body(Full::new(body(id, lens)))
            .map_err(|e| e.to_string())?;
        let started = Instant::now();
        let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
        let status = response.status();
        let bytes = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
        times.push(started.elapsed());
        check(status, &bytes, id)?;
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
    addr: &str,
    token: &Arc<str>,
    ids: &Arc<Vec<LensId>>,
    connections: usize,
    total: u64,
) -> Result<(f64, Vec<Duration>), String> {
    let next = Arc::new(AtomicU64::new(1));
    let started = Instant::now();
    let tasks: Vec<_> = (0..connections)
        .map(|_| tokio::spawn(connection(addr.to_owned(), token.clone(), ids.clone(), next.clone(), total)))
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
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_err(|e| e.to_string())?.port();
        let addr = format!("127.0.0.1:{port}");
        let mut server = server_command(&bin)
            .args(["serve", "--bind", &addr])
            .env("LENSERFIGHT_DATABASE_URL", &url)
            .env("LENSERFIGHT_LOG", "warn")
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", bin.display()))?;
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(&addr).await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        pin_this_process(1);
        // Warm the caches and the connection pool paths.
        level(&addr, &token, &ids, 8, 2_000).await?;
        println!(
            "http: {total} authenticated tools/call (get_lens and run_lens alternating) per level over {n} lenses on SQLite, server on one core:"
        );
        let pid = server.id().ok_or("the server exited")?;
        for connections in [1, 8, 64] {
            let cpu_before = cpu_time(pid);
            let (rate, times) = level(&addr, &token, &ids, connections, total).await?;
            let cpu = match (cpu_before, cpu_time(pid)) {
                (Some(a), Some(b)) => format!("  server CPU {:>5.1} µs/request", (b - a).as_secs_f64() * 1e6 / total as f64),
                _ => String::new(),
            };
            println!(
                "  {connections:>2} connections: {rate:>8.0} requests/s  p50 {:>7.3} ms  p99 {:>7.3} ms{cpu}",
                percentile(&times, 0.50).as_secs_f64() * 1e3,
                percentile(&times, 0.99).as_secs_f64() * 1e3,
            );
        }
        let _ = server.start_kill();
        let _ = server.wait().await;
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    })
}
