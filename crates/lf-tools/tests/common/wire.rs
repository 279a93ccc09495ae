//! A client of an `LfServer` served by rmcp over an in-process pipe,
//! writing JSON-RPC lines: in the handshake era (an `initialize` first) or
//! the handshake-free one (2026-07-28: every request carries its own
//! `_meta`).

use lf_tools::LfServer;
use rmcp::ServiceExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

pub struct Wire {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
    /// The 2026-07-28 era: every request carries its own `_meta`.
    inline: bool,
    /// What the client declares it can do.
    capabilities: Value,
    next_id: u64,
    /// What the server declared (its `initialize` answer, else `server/discover`'s).
    pub server_capabilities: Value,
}

impl Wire {
    /// A session with `server` in protocol `version`, declaring no capability.
    pub async fn open(server: LfServer, version: &str) -> Self {
        Self::declaring(server, version, json!({})).await
    }

    /// A session with `server` in protocol `version` whose client declares
    /// `capabilities` (at `initialize`, or in every request of 2026-07-28).
    pub async fn declaring(server: LfServer, version: &str, capabilities: Value) -> Self {
        let (client, served) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(served).await {
                let _ = running.waiting().await;
            }
        });
        let (reader, writer) = tokio::io::split(client);
        let inline = version >= "2026-07-28";
        let mut wire = Self {
            reader: BufReader::new(reader),
            writer,
            inline,
            capabilities,
            next_id: 0,
            server_capabilities: Value::Null,
        };
        if inline {
            let found = wire.result("server/discover", json!({})).await;
            wire.server_capabilities = found["capabilities"].clone();
        } else {
            let params = json!({"protocolVersion": version, "capabilities": wire.capabilities, "clientInfo": {"name": "t", "version": "1"}});
            let init = wire.request("initialize", params).await;
            assert_eq!(init["result"]["protocolVersion"], version, "{init}");
            wire.server_capabilities = init["result"]["capabilities"].clone();
            wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        }
        wire
    }

    pub async fn send(&mut self, msg: Value) {
        self.writer.write_all(format!("{msg}\n").as_bytes()).await.unwrap();
    }

    /// The whole answer to `method` with `params`.
    pub async fn request(&mut self, method: &str, mut params: Value) -> Value {
        if self.inline {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": self.capabilities
            });
        }
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let mut line = String::new();
        tokio::time::timeout(std::time::Duration::from_secs(10), self.reader.read_line(&mut line))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        let reply: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    /// The whole answer to `method` with `params`, answering each
    /// `elicitation/create` the server sends meanwhile with `answer` of its
    /// params; also the params of each.
    pub async fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        answer: impl Fn(&Value) -> Value,
    ) -> (Value, Vec<Value>) {
        let id = self.next_id + 1;
        let mut params = params;
        if self.inline {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": self.capabilities
            });
        }
        self.next_id = id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let mut asked = Vec::new();
        loop {
            let mut line = String::new();
            tokio::time::timeout(std::time::Duration::from_secs(10), self.reader.read_line(&mut line))
                .await
                .expect("a message within 10 s")
                .unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["method"] == "elicitation/create" {
                let result = answer(&message["params"]);
                asked.push(message["params"].clone());
                self.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result})).await;
                continue;
            }
            if message.get("method").is_some() {
                continue;
            }
            assert_eq!(message["id"], id, "{message}");
            return (message, asked);
        }
    }

    /// The result `method` answers, which must not be an error.
    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let reply = self.request(method, params).await;
        assert!(reply.get("error").is_none(), "{method}: {reply}");
        reply["result"].clone()
    }

    /// The JSON-RPC error `method` answers.
    pub async fn error(&mut self, method: &str, params: Value) -> Value {
        let reply = self.request(method, params).await;
        assert!(reply.get("result").is_none(), "{method} should fail: {reply}");
        reply["error"].clone()
    }
}
