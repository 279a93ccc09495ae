//! The built binary, started as an MCP client starts it.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_lf-mcp-stdio");

fn init() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

/// Runs the binary with `env`, feeds it `messages`, closes its input and
/// waits for it to exit. No configuration file is read unless `env` names
/// one (or an `XDG_CONFIG_HOME` that has one).
fn run(env: &[(&str, &str)], args: &[&str], messages: &[Value]) -> Output {
    let no_config = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("LENSERFIGHT_DATABASE_URL")
        .env_remove("LENSERFIGHT_LENSER_ID")
        .env_remove("LENSERFIGHT_CONFIG")
        .env_remove("LENSERFIGHT_TOOLSETS")
        .env("XDG_CONFIG_HOME", no_config.path());
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
        .env_remove("LENSERFIGHT_CONFIG")
        .env("XDG_CONFIG_HOME", home.path().join("config"))
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
    assert_eq!(tools.len(), 9, "only Read tools");
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
    // Every group: the 9 Read tools of lenses, the 5 of battles, search and
    // fetch, the 12 of workflows (4 of them read runs) and the 5 of agents.
    assert_eq!(lines(&out)[1]["result"]["tools"].as_array().unwrap().len(), 33);
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

fn create_lens() -> Value {
    let body = "Summarize [[Text]] in [[Words]] words for a busy reader, keeping the key facts.";
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "create_lens", "arguments": {"title": "Summary", "template_body": body}}})
}

/// The owner of the lens a session's `create_lens` made, and the session's stderr.
fn create_as(env: &[(&str, &str)]) -> (String, String) {
    let out = run(env, &[], &[init(), initialized(), create_lens()]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let answers = lines(&out);
    let created = answers.iter().find(|a| a["id"] == 2).expect("create_lens is answered");
    assert_eq!(created["result"]["isError"], false, "create_lens succeeds out of the box: {created}");
    let owner = created["result"]["structuredContent"]["lenser_id"].as_str().expect("an owner").to_owned();
    (owner, stderr)
}

#[test]
fn without_a_lenser_id_a_local_lenser_is_created_once_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("x.db").display());
    let env = |user: &'static str| [("LENSERFIGHT_DATABASE_URL", url.clone()), ("USER", user.to_owned())];
    let first_env = env("Test.User");
    let first_env: Vec<(&str, &str)> = first_env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (owner, stderr) = create_as(&first_env);
    assert!(
        stderr.contains("created the local lenser test_user") && stderr.contains(&owner),
        "the first start creates the local lenser and names it: {stderr}"
    );
    // Later starts act as the same lenser, even under another login name.
    let again_env = env("someone_else");
    let again_env: Vec<(&str, &str)> = again_env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (again, stderr) = create_as(&again_env);
    assert_eq!(again, owner, "the same lenser on every start");
    assert!(stderr.contains("acting as the local lenser test_user"), "{stderr}");
    assert!(!stderr.contains("created the local lenser"), "{stderr}");
    // The variable still wins.
    let chosen = "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d";
    let (owner, stderr) = create_as(&[("LENSERFIGHT_DATABASE_URL", &url), ("LENSERFIGHT_LENSER_ID", chosen)]);
    assert_eq!(owner, chosen);
    assert!(!stderr.contains("local lenser"), "{stderr}");
}

/// How many tools a session lists.
fn tool_count(out: &Output) -> usize {
    let answers = lines(out);
    let listed = answers.iter().find(|a| a["id"] == 2).expect("tools/list is answered");
    listed["result"]["tools"].as_array().expect("a tool list").len()
}

#[test]
fn the_configuration_file_gives_way_to_the_environment_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("lenserfight").join("config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let db = dir.path().join("from-file.db");
    std::fs::write(
        &config,
        format!("database_url = \"sqlite:{}\"\ntoolsets = [\"lens\"]\nlinger_us = 0\n", db.display()),
    )
    .unwrap();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let session = [init(), initialized(), list];
    // The default file, found through XDG_CONFIG_HOME.
    let xdg = dir.path().to_str().unwrap();
    let out = run(&[("XDG_CONFIG_HOME", xdg)], &[], &session);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(tool_count(&out), 20, "the file's toolsets: the Lens tools");
    assert!(db.exists(), "the file's database");
    let out = run(&[("XDG_CONFIG_HOME", xdg), ("LENSERFIGHT_TOOLSETS", "battle")], &[], &session);
    assert_eq!(tool_count(&out), 10, "the environment wins over the file");
    let out = run(
        &[("XDG_CONFIG_HOME", xdg), ("LENSERFIGHT_TOOLSETS", "battle")],
        &["--toolsets", "lens,battle"],
        &session,
    );
    assert_eq!(tool_count(&out), 30, "the flag wins over both");
    // A file named with --config.
    let out = run(&[], &["--config", config.to_str().unwrap()], &session);
    assert_eq!(tool_count(&out), 20);
}

#[test]
fn a_bad_configuration_file_stops_start_up_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lf.toml");
    let path = file.to_str().unwrap();
    for (text, names) in [
        ("databse_url = \"sqlite::memory:\"\n", "unknown key \"databse_url\""),
        ("linger_us = 20000\n", "linger_us in "),
        ("read_only = \"yes\"\n", "read_only in "),
        ("lenser_id = \"not-a-uuid\"\n", "lenser_id in "),
        ("toolsets = \"lens,nope\"\n", "toolsets in "),
    ] {
        std::fs::write(&file, text).unwrap();
        let out = run(&[("LENSERFIGHT_CONFIG", path)], &[], &[]);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(names) && stderr.contains(path),
            "{text}: the message names {names:?}: {stderr}"
        );
        assert!(out.stdout.is_empty());
    }
    let missing = dir.path().join("missing.toml");
    let out = run(&[], &["--config", missing.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("LENSERFIGHT_CONFIG (--config)") && stderr.contains("missing.toml"), "{stderr}");
}

/// `RUST_LOG` is the filter when `LENSERFIGHT_LOG` is unset, as in any
/// Rust program; `LENSERFIGHT_LOG` wins when both are set.
#[test]
fn rust_log_is_honoured_unless_lenserfight_log_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("x.db").display());
    let stderr = |env: &[(&str, &str)]| {
        let mut cmd = Command::new(BIN);
        cmd.env_remove("LENSERFIGHT_LOG")
            .env_remove("RUST_LOG")
            .env_remove("LENSERFIGHT_CONFIG")
            .env_remove("LENSERFIGHT_LENSER_ID")
            .env("XDG_CONFIG_HOME", dir.path())
            .env("LENSERFIGHT_DATABASE_URL", &url);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.stdin(Stdio::null()).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stderr).unwrap()
    };
    let debug = |s: &str| s.lines().any(|l| l.contains(" DEBUG "));
    let by_rust_log = stderr(&[("RUST_LOG", "debug")]);
    assert!(debug(&by_rust_log), "RUST_LOG=debug logs at debug: {by_rust_log}");
    let both = stderr(&[("RUST_LOG", "debug"), ("LENSERFIGHT_LOG", "info")]);
    assert!(!debug(&both) && both.contains(" INFO "), "LENSERFIGHT_LOG wins: {both}");
    let neither = stderr(&[]);
    assert!(!debug(&neither) && neither.contains(" INFO "), "info by default: {neither}");
    let bad = {
        let mut cmd = Command::new(BIN);
        cmd.env_remove("LENSERFIGHT_LOG").env("RUST_LOG", "info,[[[").env("XDG_CONFIG_HOME", dir.path());
        cmd.env("LENSERFIGHT_DATABASE_URL", &url).stdin(Stdio::null()).output().unwrap()
    };
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("RUST_LOG"), "a bad RUST_LOG is named");
}

#[test]
fn writes_its_metrics_to_the_metrics_file_on_exit() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("x.db").display());
    let file = dir.path().join("metrics.prom");
    let call = |id: u64, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let missing = "0193a7c4-0000-7000-8000-000000000000";
    let out = run(
        &[("LENSERFIGHT_DATABASE_URL", &url), ("LENSERFIGHT_METRICS_FILE", &file.display().to_string())],
        &[],
        &[
            init(),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            call(2, "list_lenses", json!({})),
            call(3, "get_lens", json!({"lens_id": missing})),
            call(4, "list_lenses", json!({})),
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(lines(&out).len(), 4);
    let text = std::fs::read_to_string(&file).expect("the metrics file is written on exit");
    assert!(text.contains("lenserfight_tool_calls_total{tool=\"list_lenses\",outcome=\"ok\"} 2\n"), "{text}");
    assert!(
        text.contains("lenserfight_tool_calls_total{tool=\"get_lens\",outcome=\"NOT_FOUND\"} 1\n"),
        "{text}"
    );
    assert!(!text.contains(missing), "no id a call named");
    assert!(!dir.path().join("metrics.prom.partial").exists());
}

#[test]
fn no_metrics_counts_nothing_and_writes_no_metrics_file() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("x.db").display());
    let file = dir.path().join("metrics.prom");
    let out = run(
        &[
            ("LENSERFIGHT_DATABASE_URL", &url),
            ("LENSERFIGHT_METRICS_FILE", &file.display().to_string()),
            ("LENSERFIGHT_NO_METRICS", "true"),
        ],
        &[],
        &[
            init(),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_lenses", "arguments": {}}}),
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(lines(&out).len(), 2, "the server answers as ever");
    assert!(!file.exists(), "no metrics file with metrics off");
}
