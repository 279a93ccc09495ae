//! The built binary, started as an MCP client starts it.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_lf-mcp-stdio");

fn init() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

/// Runs the binary with `env`, feeds it `messages`, closes its input and
/// waits for it to exit.
fn run(env: &[(&str, &str)], args: &[&str], messages: &[Value]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("LENSERFIGHT_DATABASE_URL").env_remove("LENSERFIGHT_LENSER_ID");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for m in messages {
        writeln!(stdin, "{m}").unwrap();
    }
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .unwrap_or_else(|e| panic!("stdout holds only JSON-RPC: {e}: {l:?}"))
        })
        .inspect(|v| assert_eq!(v["jsonrpc"], "2.0"))
        .collect()
}

#[test]
fn creates_its_database_in_the_data_directory_and_names_it() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let cwd = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .env_remove("LENSERFIGHT_DATABASE_URL")
        .env("XDG_DATA_HOME", &data)
        .current_dir(cwd.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let db = data.join("lenserfight").join("lenserfight.db");
    assert!(db.exists(), "the default database is created at {}", db.display());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&db.display().to_string()), "stderr names the database: {stderr}");
    assert!(out.stdout.is_empty(), "nothing but JSON-RPC on stdout, and here nothing was asked");
    assert_eq!(
        std::fs::read_dir(cwd.path()).unwrap().count(),
        0,
        "nothing is written to the working directory"
    );
}

#[test]
fn a_session_writes_only_json_rpc_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("x.db").display());
    let body = "Summarize [[Text]] in [[Words]] words for a busy reader, keeping the key facts.";
    let out = run(
        &[
            ("LENSERFIGHT_DATABASE_URL", &url),
            ("LENSERFIGHT_LENSER_ID", "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d"),
            ("LENSERFIGHT_LOG", "debug"),
        ],
        &[],
        &[
            init(),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "create_lens", "arguments": {"title": "Summary", "template_body": body}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_lenses", "arguments": {}}}),
        ],
    );
    assert!(out.status.success());
    let mut answers = lines(&out);
    assert_eq!(answers.len(), 3, "every request is answered before exit, even after stdin closed");
    answers.sort_by_key(|a| a["id"].as_i64());
    assert_eq!(answers[1]["result"]["isError"], false, "{}", answers[1]);
    assert!(answers[2]["result"]["structuredContent"]["total"].is_u64());
    assert!(!out.stderr.is_empty(), "logs go to stderr");
}

#[test]
fn bad_configuration_stops_start_up_naming_the_key() {
    for (env, args, key) in [
        (vec![("LENSERFIGHT_LENSER_ID", "not-a-uuid")], vec![], "LENSERFIGHT_LENSER_ID"),
        (vec![("LENSERFIGHT_DATABASE_URL", "mysql://root@db/x")], vec![], "LENSERFIGHT_DATABASE_URL"),
        (vec![("LENSERFIGHT_TOOLSETS", "lens,nope")], vec![], "LENSERFIGHT_TOOLSETS"),
        (vec![("LENSERFIGHT_LOG", "info,[[[")], vec![], "LENSERFIGHT_LOG"),
        (vec![], vec!["--toolsets", "battles"], "LENSERFIGHT_TOOLSETS"),
        (vec![("LENSERFIGHT_LINGER_US", "20000")], vec![], "LENSERFIGHT_LINGER_US"),
    ] {
        let out = run(&env, &args, &[]);
        assert_eq!(out.status.code(), Some(2), "{key}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(key), "the message names {key}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn read_only_and_toolsets() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("x.db").display());
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let out = run(
        &[("LENSERFIGHT_DATABASE_URL", &url)],
        &["--read-only", "--toolsets", "lens"],
        &[init(), initialized.clone(), list.clone()],
    );
    let tools = lines(&out)[1]["result"]["tools"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 8, "only Read tools");
    assert!(tools.iter().all(|t| t["annotations"]["readOnlyHint"] == true));
    // (And a server that never lingers answers the same.)
    let out = run(
        &[
            ("LENSERFIGHT_DATABASE_URL", &url),
            ("LENSERFIGHT_READ_ONLY", "true"),
            ("LENSERFIGHT_LINGER_US", "0"),
        ],
        &[],
        &[init(), initialized, list],
    );
    // Every group: the 8 Read tools of lenses and the 5 of battles.
    assert_eq!(lines(&out)[1]["result"]["tools"].as_array().unwrap().len(), 13);
}
