#![allow(dead_code)]

//! The built `lf-mcp-http` binary as an operator runs it: `admin`
//! commands on a database of its own, then `serve` on a loopback port with
//! its log (stderr) kept for the test to read, and an MCP session over it.
//! Also a small HTTP server on loopback that workflow steps reach.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_lf-mcp-http");

/// A data directory, database and key of their own, no configuration file,
/// no settings from the test's environment.
pub struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Self {
        Home { dir: tempfile::tempdir().unwrap() }
    }

    pub fn database(&self) -> PathBuf {
        self.dir.path().join("lf.db")
    }

    fn command(&self, env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(BIN);
        for (k, _) in std::env::vars() {
            if k.starts_with("LENSERFIGHT_") || k == "RUST_LOG" {
                cmd.env_remove(k);
            }
        }
        cmd.env("LENSERFIGHT_DATABASE_URL", format!("sqlite://{}", self.database().display()))
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    /// The directory the data directory and configuration are in.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `lf-mcp-http admin …args` with `stdin`, whatever its outcome.
    pub fn admin_output(&self, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
        let mut child = self
            .command(env)
            .arg("admin")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    }

    /// `lf-mcp-http admin …args` with `stdin`: its stdout, and its stderr
    /// appended to `log`. Panics unless it succeeds.
    pub fn admin(&self, args: &[&str], stdin: &str, env: &[(&str, &str)], log: &mut Vec<u8>) -> String {
        let out = self.admin_output(args, stdin, env);
        log.extend_from_slice(&out.stderr);
        assert!(out.status.success(), "admin {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    /// `lf-mcp-http serve --bind 127.0.0.1:0 …args`, once it is ready.
    pub fn serve(&self, args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut child = self
            .command(env)
            .args(["serve", "--bind", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let kept = log.clone();
        std::thread::spawn(move || {
            let mut line = Vec::new();
            while stderr.read_until(b'\n', &mut line).map(|n| n > 0).unwrap_or(false) {
                let text = String::from_utf8_lossy(&line);
                if let Some(at) = text.find("MCP at ") {
                    let url = text[at + "MCP at ".len()..].split_whitespace().next().unwrap_or("");
                    let _ = tx.send(url.trim_end_matches("/mcp").to_owned());
                }
                kept.lock().unwrap().extend_from_slice(&line);
                line.clear();
            }
        });
        let base = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("the server did not start: {}", String::from_utf8_lossy(&log.lock().unwrap()))
        });
        Served { child, log, base }
    }
}

/// A running `serve`.
pub struct Served {
    child: Child,
    log: Arc<Mutex<Vec<u8>>>,
    pub base: String,
}

impl Served {
    /// Stops the server (SIGTERM, then waits): every byte it logged.
    pub fn stop(mut self) -> Vec<u8> {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the server stops within 15 s of SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
        // The reader thread ends at end of file; give it the last lines.
        std::thread::sleep(Duration::from_millis(100));
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An MCP session with `--sessions` as one bearer token.
pub struct Session {
    client: reqwest::Client,
    url: String,
    token: String,
    id: Option<String>,
    next: u64,
}

impl Session {
    pub async fn open(base: &str, token: &str) -> Self {
        let client = lf_model::client_builder().no_proxy().build().unwrap();
        let mut s =
            Session { client, url: format!("{base}/mcp"), token: token.to_owned(), id: None, next: 1 };
        let (init, headers) = s
            .post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}))
            .await;
        assert!(init["result"]["protocolVersion"].is_string(), "{init}");
        s.id = headers.get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
        assert!(s.id.is_some(), "--sessions gives a session id");
        s.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        s
    }

    /// Posts `body`: the JSON-RPC message answered (null for none), and the headers.
    async fn post(&mut self, body: Value) -> (Value, reqwest::header::HeaderMap) {
        let mut r = self
            .client
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(id) = &self.id {
            r = r.header("mcp-session-id", id);
        }
        let mut response = r.json(&body).send().await.unwrap();
        let headers = response.headers().clone();
        let mut text = String::new();
        loop {
            if let Ok(v) = serde_json::from_str(&text) {
                return (v, headers);
            }
            for line in text.lines() {
                if let Some(data) = line.strip_prefix("data:").map(str::trim)
                    && let Ok(v) = serde_json::from_str::<Value>(data)
                {
                    return (v, headers);
                }
            }
            match tokio::time::timeout(Duration::from_secs(20), response.chunk()).await {
                Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(Ok(None)) if text.is_empty() => return (Value::Null, headers),
                other => panic!("no JSON-RPC message in {text:?} ({other:?})"),
            }
        }
    }

    /// Calls `tool`: its whole result (structured content and text).
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let (answer, _) = self.post(body).await;
        answer["result"].clone()
    }

    /// Calls `tool`, which must succeed: its structured content.
    pub async fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments).await;
        assert_ne!(result["isError"], json!(true), "{tool}: {result}");
        result["structuredContent"].clone()
    }

    /// Runs `workflow` and waits for the run to end: its id.
    pub async fn run(&mut self, workflow: &str) -> String {
        let started = self.ok("run_workflow", json!({"workflow_id": workflow})).await;
        let run = started["id"].as_str().unwrap().to_owned();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let status = self.ok("get_workflow_run_status", json!({"run_id": run})).await;
            if ["completed", "failed", "cancelled"].contains(&status["status"].as_str().unwrap_or("")) {
                return run;
            }
            assert!(Instant::now() < deadline, "the run ends within 60 s: {status}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// One request as a [`Service`] read it.
pub struct Request {
    pub head: String,
    pub path: String,
}

/// What a [`Service`] answers: status, extra headers, body.
pub type Answer = (u16, Vec<(String, String)>, String);

/// A small HTTP/1.1 server on 127.0.0.1: one connection per request, each
/// answered by `answer`.
pub struct Service {
    pub addr: SocketAddr,
}

impl Service {
    pub fn start(answer: fn(&Request) -> Answer) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || serve_one(stream, answer));
            }
        });
        Service { addr }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

fn serve_one(mut stream: TcpStream, answer: fn(&Request) -> Answer) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let length = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()))
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    head.push_str(&String::from_utf8_lossy(&body));
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let (status, headers, body) = answer(&Request { head, path });
    let mut out = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&body);
    let _ = stream.write_all(out.as_bytes());
}

/// Every byte of the SQLite database at `path` and its journal files.
pub fn database_bytes(path: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    for entry in std::fs::read_dir(path.parent().unwrap()).unwrap() {
        let p = entry.unwrap().path();
        if p.file_name().unwrap().to_string_lossy().starts_with(&name) {
            all.extend(std::fs::read(&p).unwrap());
        }
    }
    all
}

/// Whether `needle` occurs in `hay`.
pub fn holds(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}
