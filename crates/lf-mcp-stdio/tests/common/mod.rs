//! The stdio server over an in-process pipe, and a client to talk to it.

#![allow(dead_code)]

use lf_mcp_stdio::{Args, StdioConfig};
use lf_server::{Background, CommonArgs};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

pub const LENSER: &str = "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d";

pub const BODY: &str =
    "Write a short essay about [[Topic]] for [[Audience]] in a [[Tone!]] tone, with examples.";

pub struct Client {
    reader: BufReader<ReadHalf<DuplexStream>>,
    pub writer: WriteHalf<DuplexStream>,
    _dir: tempfile::TempDir,
}

impl Client {
    pub async fn start(lenser: Option<&str>) -> Self {
        Self::start_with(lenser, CommonArgs::default()).await
    }

    /// A server with the settings `common` (its database aside).
    pub async fn start_with(lenser: Option<&str>, common: CommonArgs) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let common = CommonArgs {
            database_url: Some(format!("sqlite:{}", dir.path().join("t.db").display())),
            ..common
        };
        let args = Args { common, lenser_id: lenser.map(str::to_owned), ..Args::default() };
        let config = StdioConfig::from_args(&args).unwrap();
        let db = lf_mcp_stdio::open(&config).await.unwrap();
        let built = lf_mcp_stdio::server(&config, &db, Background::current());
        built.runner.start();
        let server = built.server;
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server_end);
        tokio::spawn(async move {
            lf_mcp_stdio::serve(server, sr, sw).await.unwrap();
            drop(db);
        });
        let (cr, cw) = tokio::io::split(client_end);
        Client { reader: BufReader::new(cr), writer: cw, _dir: dir }
    }

    /// A client in a session of protocol `version`, acting as [`LENSER`].
    pub async fn initialized(version: &str) -> Self {
        Self::initialized_with(version, CommonArgs::default()).await
    }

    /// [`Client::initialized`], on a server with the settings `common`.
    pub async fn initialized_with(version: &str, common: CommonArgs) -> Self {
        let mut c = Self::start_with(Some(LENSER), common).await;
        let init = c
            .request(0, "initialize", json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))
            .await;
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        c
    }

    pub async fn send(&mut self, msg: Value) {
        self.send_line(&msg.to_string()).await;
    }

    /// Sends `line` as it is, and a newline.
    pub async fn send_line(&mut self, line: &str) {
        self.writer.write_all(format!("{line}\n").as_bytes()).await.unwrap();
    }

    /// The next line, as it came.
    pub async fn recv_line(&mut self) -> String {
        let mut line = String::new();
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), self.reader.read_line(&mut line))
            .await
            .expect("the server answers within 10 s")
            .unwrap();
        assert!(n > 0, "the server closed its output");
        line
    }

    pub async fn recv(&mut self) -> Value {
        let line = self.recv_line().await;
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC lines: {e}: {line:?}"))
    }

    /// The next line, if one comes within `ms` milliseconds.
    pub async fn recv_within(&mut self, ms: u64) -> Option<String> {
        let mut line = String::new();
        let read = self.reader.read_line(&mut line);
        tokio::time::timeout(std::time::Duration::from_millis(ms), read).await.ok().map(|_| line)
    }

    pub async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let reply = self.recv().await;
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    /// Creates a lens from [`BODY`]; its id.
    pub async fn create_lens(&mut self, id: u64, title: &str) -> String {
        let created = self
            .request(
                id,
                "tools/call",
                json!({"name": "create_lens", "arguments": {"title": title, "template_body": BODY}}),
            )
            .await;
        assert_eq!(created["result"]["isError"], false, "{created}");
        created["result"]["structuredContent"]["id"].as_str().unwrap().to_owned()
    }
}

pub fn inline_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "pipe-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}
