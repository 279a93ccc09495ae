//! The built binary over pipes, driven as a client drives it: requests
//! written, answers read by id (they come in any order), its stderr kept.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_lf-mcp-stdio");

/// The lenser the kill tests' servers act as.
#[allow(dead_code)] // not every test kills a server
pub const LENSER: &str = "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4e";

/// A configuration home under `dir` whose file names one `[[models]]`
/// endpoint, `fake`, at `base_url`.
#[allow(dead_code)] // not every test asks models
pub fn models_home(dir: &Path, base_url: &str) -> PathBuf {
    let config = dir.join("config");
    std::fs::create_dir_all(config.join("lenserfight")).unwrap();
    std::fs::write(
        config.join("lenserfight").join("config.toml"),
        format!("[[models]]\nname = \"fake\"\nbase_url = \"{base_url}\"\nconcurrency = 8\ntimeout = 10\n"),
    )
    .unwrap();
    config
}

/// The binary on `db` with the configuration home `config`, as [`LENSER`],
/// every toolset on, leases of 2 s (so a restart takes a killed
/// process's work over soon), as the client `client` declaring
/// `capabilities`.
#[allow(dead_code)] // not every test kills a server
pub fn start_on(db: &str, config: &Path, client: &str, capabilities: Value) -> Piped {
    let mut cmd = Command::new(BIN);
    cmd.env("LENSERFIGHT_DATABASE_URL", db)
        .env("LENSERFIGHT_LENSER_ID", LENSER)
        .env("LENSERFIGHT_EGRESS_ALLOW", "127.0.0.1")
        .env("LENSERFIGHT_TOOLSETS", "all")
        .env("LENSERFIGHT_RUN_LEASE", "2")
        .env("LENSERFIGHT_LOG", "warn")
        .env_remove("LENSERFIGHT_CONFIG")
        .env("XDG_CONFIG_HOME", config);
    Piped::declaring(cmd, client, capabilities)
}

pub struct Piped {
    pub child: Child,
    pub stdin: ChildStdin,
    answers: Receiver<Value>,
    /// Answers read while waiting for another.
    early: HashMap<u64, Value>,
    next: u64,
    log: Arc<Mutex<String>>,
}

impl Piped {
    /// Starts `cmd` (the binary with its environment) and opens a session
    /// as the client `client`.
    #[allow(dead_code)] // not every test starts one itself
    pub fn start(cmd: Command, client: &str) -> Piped {
        Piped::declaring(cmd, client, json!({}))
    }

    /// [`Piped::start`], the client declaring `capabilities`.
    pub fn declaring(mut cmd: Command, client: &str, capabilities: Value) -> Piped {
        let mut child =
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, answers) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    return;
                }
            }
        });
        let log = Arc::new(Mutex::new(String::new()));
        let (stderr, kept) = (child.stderr.take().unwrap(), log.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                let mut k = kept.lock().unwrap();
                k.push_str(&line);
                k.push('\n');
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut s = Piped { child, stdin, answers, early: HashMap::new(), next: 1, log };
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": client, "version": "1"}});
        s.call("initialize", init);
        writeln!(s.stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        s
    }

    /// Writes a request; its id.
    pub fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .unwrap();
        id
    }

    /// The answer to request `id`.
    pub fn wait(&mut self, id: u64) -> Value {
        loop {
            if let Some(v) = self.early.remove(&id) {
                return v;
            }
            let v = self.answers.recv_timeout(Duration::from_secs(60)).expect("an answer");
            match v["id"].as_u64() {
                Some(got) if got == id => return v,
                Some(got) => {
                    self.early.insert(got, v);
                }
                None => {}
            }
        }
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.wait(id)
    }

    /// A tool call that must succeed: its structured content.
    pub fn tool(&mut self, name: &str, args: Value) -> Value {
        let answer = self.call("tools/call", json!({"name": name, "arguments": args}));
        let result = &answer["result"];
        assert_ne!(result["isError"], true, "{name}: {answer}");
        result["structuredContent"].clone()
    }

    /// Closes stdin, as a client leaving does, and waits for the exit.
    #[allow(dead_code)] // not every test leaves this way
    pub fn finish(self) -> std::process::ExitStatus {
        let Piped { stdin, mut child, .. } = self;
        drop(stdin);
        child.wait().unwrap()
    }

    /// What it wrote to stderr so far.
    #[allow(dead_code)] // not every test reads it
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }
}
