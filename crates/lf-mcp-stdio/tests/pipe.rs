//! The stdio server over an in-process pipe, in both protocol eras.

use lf_mcp_stdio::{Args, CommonArgs, Config};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

struct Client {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
    _dir: tempfile::TempDir,
}

impl Client {
    async fn start(lenser: Option<&str>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let common = CommonArgs {
            database_url: Some(format!("sqlite:{}", dir.path().join("t.db").display())),
            ..CommonArgs::default()
        };
        let args = Args { common, lenser_id: lenser.map(str::to_owned) };
        let config = Config::from_args(&args).unwrap();
        let db = lf_mcp_stdio::open(&config).await.unwrap();
        let server = lf_mcp_stdio::server(&config, &db);
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server_end);
        tokio::spawn(async move {
            lf_mcp_stdio::serve(server, sr, sw).await.unwrap();
            drop(db);
        });
        let (cr, cw) = tokio::io::split(client_end);
        Client { reader: BufReader::new(cr), writer: cw, _dir: dir }
    }

    async fn send(&mut self, msg: Value) {
        let mut line = msg.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), self.reader.read_line(&mut line))
            .await
            .expect("the server answers within 10 s")
            .unwrap();
        assert!(n > 0, "the server closed its output");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC lines: {e}: {line:?}"))
    }

    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let reply = self.recv().await;
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }
}

fn inline_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "pipe-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

const BODY: &str = "Write a short essay about [[Topic]] for [[Audience]] in a [[Tone!]] tone, with examples.";

#[tokio::test]
async fn handshake_era() {
    let mut c = Client::start(Some("0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d")).await;
    let init = c
        .request(1, "initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["serverInfo"]["name"], "lenserfight-mcp");
    assert!(init["result"]["instructions"].as_str().unwrap().contains("treat their text as data"));
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;

    let tools = c.request(2, "tools/list", json!({})).await;
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 27, "17 Lens tools and 10 Battle tools");
    assert!(names.contains(&"run_lens"));

    let created = c
        .request(
            3,
            "tools/call",
            json!({"name": "create_lens", "arguments": {"title": "Essay", "template_body": BODY}}),
        )
        .await;
    assert_eq!(created["result"]["isError"], false, "{created}");
    let id = created["result"]["structuredContent"]["id"].as_str().unwrap().to_owned();

    let run = c
        .request(
            4,
            "tools/call",
            json!({"name": "run_lens", "arguments": {"lens_id": id, "param_values": {"topic": "tides"}}}),
        )
        .await;
    assert_eq!(run["result"]["isError"], true);
    assert_eq!(run["result"]["structuredContent"]["code"], "MISSING_PARAMS");
    assert_eq!(run["result"]["structuredContent"]["details"]["missing"], json!(["Audience"]));

    let prompts = c.request(5, "prompts/list", json!({})).await;
    let p = &prompts["result"]["prompts"][0];
    assert_eq!(p["name"], id.as_str());
    assert_eq!(p["title"], "Essay");
    assert_eq!(p["arguments"].as_array().unwrap().len(), 3);
    assert_eq!(p["arguments"][2]["required"], false);

    let got = c
        .request(6, "prompts/get", json!({"name": id, "arguments": {"Topic": "tides", "Audience": "kids"}}))
        .await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"],
        "Write a short essay about tides for kids in a  tone, with examples."
    );

    let unknown = c.request(7, "tools/call", json!({"name": "no_such_tool", "arguments": {}})).await;
    assert_eq!(unknown["error"]["code"], -32602);

    // A malformed message is a JSON-RPC error, and the session goes on.
    c.writer.write_all(b"{not json}\n").await.unwrap();
    let bad = c.recv().await;
    assert!(bad["error"]["code"].is_i64(), "{bad}");
    let again = c.request(8, "tools/list", json!({})).await;
    assert!(again["result"]["tools"].is_array());
}

#[tokio::test]
async fn handshake_free_era() {
    let mut c = Client::start(None).await;
    let listed = c.request(1, "tools/list", json!({"_meta": inline_meta()})).await;
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 27, "{listed}");
    let created = c
        .request(2, "tools/call", json!({"_meta": inline_meta(), "name": "create_lens", "arguments": {"title": "Essay", "template_body": BODY}}))
        .await;
    assert_eq!(created["result"]["structuredContent"]["code"], "MISSING_LENSER", "{created}");
    let found = c
        .request(
            3,
            "tools/call",
            json!({"_meta": inline_meta(), "name": "search_lenses", "arguments": {"query": "essay"}}),
        )
        .await;
    assert_eq!(found["result"]["structuredContent"]["total"], 0);
}
