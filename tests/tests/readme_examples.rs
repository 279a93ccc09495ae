//! Every JSON block and curl command of the README works as written. The
//! line before each JSON block is `<!-- example: NAME -->`: NAME is a tool,
//! and the block its arguments, or `client`, and the block an MCP client's
//! configuration. A JSON block without a marker, or with another, fails
//! the test.
//!
//! The tool calls run in the README's order against the stdio server's own
//! wiring (lf-mcp-stdio's configuration, database, local lenser, catalog
//! and workflow runner) over a fresh SQLite file, with no model and no
//! network, as a new user's client makes them. `LENS_ID`, `WORKFLOW_ID`
//! and `RUN_ID` stand for the ids the calls before made; a workflow
//! created is validated at once, and `get_workflow_run_status` is polled
//! until its run ends, which must be `completed`. A `connection add` marker
//! before a shell block runs that command line as the binary would, and a
//! `curl` marker sends its curl commands to lf-mcp-http serving in process.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use clap::Parser;
use lf_mcp_stdio::{Args, Command, StdioConfig};
use lf_server::{Background, Built, CommonArgs, Database, SHUTDOWN_GRACE, Setting};
use lf_tests::readme::{Block, blocks, readme, workspace_root};
use lf_tests::{Reply, call};
use serde_json::{Value, json};

/// The secret key of the test's server and commands (any 32 bytes), so
/// that no key file is made in the user's data directory.
const SECRET_KEY: &str = "7f3c1a9e5b2d4f6081a3c5e7f9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7";

/// What the Slack webhook's URL is in the test (no call reaches it).
const WEBHOOK_URL: &str = "https://hooks.slack.com/services/T000/B000/XXXXXXXX";

/// The stdio server's wiring over a fresh SQLite file, acting as its local
/// lenser, with its runner running.
struct Stdio {
    built: Built,
    db: Database,
    background: std::sync::Arc<Background>,
    runs: tokio::task::JoinHandle<()>,
    url: String,
    _dir: tempfile::TempDir,
}

impl Stdio {
    async fn start() -> Stdio {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let url = format!("sqlite:{}", dir.path().join("lenserfight.db").display());
        let args = Args { common: common(&url), ..Args::default() };
        let mut config = StdioConfig::from_args(&args).expect("the settings check");
        let db = lf_mcp_stdio::open(&config).await.expect("the database opens");
        config.act_as_local_lenser(&db).await.expect("the local lenser");
        let background = Background::current();
        let built = lf_mcp_stdio::server(&config, &db, background.clone());
        let runs = built.runner.start();
        built.ledger.start();
        Stdio { built, db, background, runs, url, _dir: dir }
    }

    async fn call(&self, tool: &str, args: Value) -> Reply {
        call(&self.built.server, tool, args).await.unwrap_or_else(|e| panic!("{tool}: {e}"))
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        let reply = self.call(tool, args).await;
        assert!(!reply.is_error, "{tool} failed: {}", reply.brief());
        reply.value
    }

    /// Runs a README line `printf '%s' "$VAR" | BIN connection …` on this
    /// server's database, with `secret` as what `printf` writes.
    async fn command(&self, line: &str, secret: &str) -> String {
        let (input, command) = line.split_once(" | ").map_or(("", line), |(i, c)| (i, c));
        let words: Vec<&str> = command.split_whitespace().collect();
        assert!(
            !command.contains(['\'', '"', '\\']),
            "the test splits the command at spaces; quote nothing in: {command}"
        );
        let binary = words[0].rsplit('/').next().unwrap_or_default();
        assert_eq!(binary, "lf-mcp-stdio", "the command runs the stdio binary: {line}");
        assert!(workspace_binaries().contains(&binary.to_owned()), "{binary} is built by this workspace");
        if !input.is_empty() {
            assert!(
                input.starts_with("printf '%s' \"$") && input.ends_with('"'),
                "the secret comes from a variable, on standard input, without a newline: {input}"
            );
        }
        let mut argv = words.clone();
        argv.extend(["--database-url", &self.url, "--secret-key", SECRET_KEY]);
        let args = Args::try_parse_from(&argv).unwrap_or_else(|e| panic!("{line}: {e}"));
        let Some(Command::Connection(connection)) = args.command else {
            panic!("{line} is no connection command")
        };
        let mut out = Vec::new();
        lf_server::run_connection_command(connection, &mut secret.as_bytes(), &mut out)
            .await
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        String::from_utf8(out).expect("the command writes text")
    }

    /// Polls get_workflow_run_status with `args` until the run has ended
    /// (a minute at most): its last answer.
    async fn until_ended(&self, args: &Value) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let status = self.ok("get_workflow_run_status", args.clone()).await;
            if matches!(status["status"].as_str(), Some("completed" | "failed" | "cancelled")) {
                return status;
            }
            assert!(Instant::now() < deadline, "the run did not end: {status}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn stop(self) {
        self.built.runner.shutdown().await;
        self.runs.await.expect("the runner's task ends");
        self.background.shutdown(SHUTDOWN_GRACE).await;
        self.built.ledger.close().await;
        self.db.close().await;
    }
}

/// The shared settings of the test's server and commands.
fn common(url: &str) -> CommonArgs {
    CommonArgs {
        database_url: Some(url.to_owned()),
        secret_key: Some(lf_server::KeyText(SECRET_KEY.to_owned())),
        ..CommonArgs::default()
    }
}

/// The binaries the workspace builds: the names of its crates' `[[bin]]`
/// tables, and of a crate with a `src/main.rs`.
fn workspace_binaries() -> Vec<String> {
    let mut out = Vec::new();
    let crates = std::fs::read_dir(workspace_root().join("crates")).expect("crates/");
    for krate in crates.map(|e| e.expect("a crate").path()) {
        let Ok(manifest) = std::fs::read_to_string(krate.join("Cargo.toml")) else { continue };
        let mut table = "";
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                table = line;
                continue;
            }
            let names = table == "[[bin]]" || (table == "[package]" && krate.join("src/main.rs").exists());
            if names && let Some(value) = line.strip_prefix("name").and_then(|r| r.trim().strip_prefix('=')) {
                out.push(value.trim().trim_matches('"').to_owned());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Replaces every placeholder (a string such as `LENS_ID`) in `args` by
/// the id it stands for; a placeholder no call made yet fails.
fn fill(args: &mut Value, ids: &HashMap<&str, String>, block: &Block<'_>) {
    match args {
        Value::String(s) if s.ends_with("_ID") && s.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') => {
            let id = ids.get(s.as_str()).unwrap_or_else(|| {
                panic!("README.md:{}: {s} stands for no id a block before made", block.line)
            });
            *s = id.clone();
        }
        Value::Array(items) => items.iter_mut().for_each(|v| fill(v, ids, block)),
        Value::Object(fields) => fields.values_mut().for_each(|v| fill(v, ids, block)),
        _ => {}
    }
}

/// The placeholder a tool's result gives a value to, and where in the result.
fn made_by(tool: &str) -> Option<(&'static str, &'static str)> {
    match tool {
        "create_lens" => Some(("LENS_ID", "id")),
        "create_workflow" => Some(("WORKFLOW_ID", "id")),
        "run_workflow" => Some(("RUN_ID", "id")),
        _ => None,
    }
}

/// Checks an MCP client's configuration of this server: the entry
/// `lenserfight` of `mcpServers` (Claude Desktop, Cursor) or `servers` (VS
/// Code), which starts a binary of this workspace that serves MCP on stdio,
/// by its absolute path, or names an `/mcp` URL.
fn check_client(config: &Value, block: &Block<'_>) {
    let at = format!("README.md:{}", block.line);
    let object = config.as_object().unwrap_or_else(|| panic!("{at}: a client configuration is an object"));
    assert_eq!(object.len(), 1, "{at}: one key, mcpServers or servers");
    let (vscode, servers) = match (object.get("mcpServers"), object.get("servers")) {
        (Some(s), None) => (false, s),
        (None, Some(s)) => (true, s),
        _ => panic!("{at}: the key is mcpServers (Claude Desktop, Cursor) or servers (VS Code)"),
    };
    let entry = servers["lenserfight"].as_object().unwrap_or_else(|| panic!("{at}: no lenserfight entry"));
    let known: &[&str] =
        if vscode { &["type", "command", "args", "env", "url"] } else { &["command", "args", "env", "url"] };
    for key in entry.keys() {
        assert!(known.contains(&key.as_str()), "{at}: {key} is not a key of this client's entries");
    }
    if let Some(url) = entry.get("url") {
        let url = url.as_str().unwrap_or_default();
        assert!(
            url.starts_with("http") && url.ends_with("/mcp"),
            "{at}: the server's endpoint is /mcp: {url}"
        );
        if vscode {
            assert_eq!(entry.get("type"), Some(&json!("http")), "{at}: VS Code's type of a URL is http");
        }
        return;
    }
    let command = entry["command"].as_str().unwrap_or_else(|| panic!("{at}: neither command nor url"));
    if vscode {
        assert_eq!(entry.get("type"), Some(&json!("stdio")), "{at}: VS Code's type of a command is stdio");
    }
    assert!(command.starts_with('/'), "{at}: clients start the binary by its absolute path: {command}");
    let binary = command.rsplit('/').next().unwrap_or_default();
    assert!(
        workspace_binaries().contains(&binary.to_owned()),
        "{at}: {binary} is not a binary of this workspace ({:?})",
        workspace_binaries()
    );
    let args: Vec<String> = entry
        .get("args")
        .map(|a| serde_json::from_value(a.clone()).unwrap_or_else(|_| panic!("{at}: args are strings")))
        .unwrap_or_default();
    assert_eq!(binary, "lf-mcp-stdio", "{at}: a client that starts a command speaks stdio to it");
    let parsed = Args::try_parse_from(std::iter::once(binary.to_owned()).chain(args))
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    assert!(parsed.command.is_none(), "{at}: with these arguments the binary serves MCP on stdio");
    for variable in entry.get("env").and_then(Value::as_object).into_iter().flat_map(|e| e.keys()) {
        assert!(
            Setting::from_env(variable).is_some() || variable == lf_server::CONFIG_ENV,
            "{at}: {variable} is no setting"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_json_block_of_the_readme_is_a_call_that_works_or_a_client_configuration() {
    let text = readme();
    let server = Stdio::start().await;
    let catalog = lf_tools::Catalog::new();
    let mut ids: HashMap<&str, String> = HashMap::new();
    let mut checked = HashMap::<&str, usize>::new();
    let mut completed = Vec::new();
    let mut first_workflow = None;
    let mut logged = 0;
    for block in blocks(&text) {
        if block.marker == Some("connection add") {
            let line = block.body.lines().find(|l| !l.starts_with('#') && !l.trim().is_empty());
            let line = line.unwrap_or_else(|| panic!("README.md:{}: no command", block.line));
            let out = server.command(line, WEBHOOK_URL).await;
            assert!(out.starts_with("saved connection"), "README.md:{}: {out}", block.line);
            *checked.entry("connection add").or_default() += 1;
            continue;
        }
        if block.lang != "json" {
            continue;
        }
        let at = format!("README.md:{}", block.line);
        let marker = block.marker.unwrap_or_else(|| {
            panic!("{at}: a JSON block needs <!-- example: TOOL --> or <!-- example: client --> before it")
        });
        let mut value: Value =
            serde_json::from_str(block.body).unwrap_or_else(|e| panic!("{at}: not JSON: {e}"));
        if marker == "client" {
            check_client(&value, &block);
            *checked.entry("client").or_default() += 1;
            continue;
        }
        let tool =
            catalog.get(marker).unwrap_or_else(|| panic!("{at}: {marker} is neither a tool nor client"));
        fill(&mut value, &ids, &block);
        let result = if tool.name == "get_workflow_run_status" {
            server.until_ended(&value).await
        } else {
            server.ok(tool.name, value.clone()).await
        };
        if let Some((placeholder, field)) = made_by(tool.name) {
            let id = result[field].as_str().unwrap_or_else(|| panic!("{at}: no {field} in {result}"));
            ids.insert(placeholder, id.to_owned());
        }
        match tool.name {
            "create_workflow" => {
                let id = ids["WORKFLOW_ID"].clone();
                assert_eq!(result["warnings"], json!([]), "{at}: {result}");
                let report = server.ok("validate_workflow", json!({"workflow_id": id})).await;
                assert_eq!(
                    (&report["valid"], &report["run_ready"], &report["errors"], &report["warnings"]),
                    (&json!(true), &json!(true), &json!([]), &json!([])),
                    "{at}: {report}"
                );
                first_workflow.get_or_insert(id);
            }
            "get_workflow_run_status" => {
                assert_eq!(result["status"], "completed", "{at}: {result}");
                let logs = server.ok("get_workflow_run_logs", json!({"run_id": value["run_id"]})).await;
                let steps = logs["node_results"].as_array().expect("node results");
                for step in steps {
                    assert_eq!(step["status"], "completed", "{at}: every step ran: {step}");
                }
                // The first workflow's `log` step: the line the README tells of,
                // its placeholders filled from the digest it was given.
                for step in steps.iter().filter(|s| s["step"] == "log" && s["node_type"] == "logger") {
                    let digest = &step["input"]["input"];
                    let (model, text) = (digest["model"].as_str(), digest["text"].as_str());
                    let line =
                        format!("Digest by {}: {}", model.unwrap_or_default(), text.unwrap_or_default());
                    assert_eq!(model, Some("offline-deterministic"), "{at}: {step}");
                    assert_eq!(step["log"], json!({"level": "info", "message": line}), "{at}: {step}");
                    assert_eq!(step["output"], *digest, "{at}: a logger passes its input on");
                    logged += 1;
                }
                completed.push(result["workflow_id"].as_str().expect("the run's workflow").to_owned());
            }
            _ => {}
        }
        *checked.entry(tool.name).or_default() += 1;
    }
    server.stop().await;
    let first = first_workflow.expect("the README creates a workflow");
    assert!(completed.contains(&first), "the README's first workflow runs to completed: {completed:?}");
    assert_eq!(logged, 1, "the first workflow's logger step wrote its line");
    assert!(checked.get("client").is_some_and(|n| *n >= 2), "the client configurations: {checked:?}");
    assert!(checked.contains_key("connection add"), "a workflow with a saved connection: {checked:?}");
}

/// What the README says of a step whose saved connection is missing:
/// create_workflow refuses the blueprint with CONNECTION_UNKNOWN and the
/// command to run; after the README's `connection add` it is created; once
/// the connection is removed, validate_workflow reports CONNECTION_UNKNOWN
/// and run_workflow refuses to start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_whose_connection_is_not_saved_is_refused_as_the_readme_says() {
    let text = readme();
    let all = blocks(&text);
    let json_of = |block: &Block<'_>| -> Value {
        serde_json::from_str(block.body).unwrap_or_else(|e| panic!("README.md:{}: {e}", block.line))
    };
    let lens = all.iter().find(|b| b.marker == Some("create_lens")).expect("the README creates a lens");
    let at = all.iter().position(|b| b.marker == Some("connection add")).expect("a connection add example");
    let line = all[at].body.lines().find(|l| !l.starts_with('#') && !l.trim().is_empty()).expect("a command");
    let workflow = all[at..].iter().find(|b| b.marker == Some("create_workflow")).expect("its workflow");

    let server = Stdio::start().await;
    let lens_id = server.ok("create_lens", json_of(lens)).await["id"].as_str().expect("an id").to_owned();
    let mut blueprint = json_of(workflow);
    fill(&mut blueprint, &HashMap::from([("LENS_ID", lens_id)]), workflow);

    let refused = server.call("create_workflow", blueprint.clone()).await;
    assert_eq!(refused.code(), Some("INVALID_ARGUMENT"), "{}", refused.brief());
    let problem = &refused.value["details"]["errors"][0];
    assert_eq!(problem["code"], "CONNECTION_UNKNOWN", "{}", refused.value);
    let hint = problem["hint"].as_str().expect("a hint");
    assert!(hint.contains("connection add --provider slack --ref team-slack"), "{hint}");

    server.command(line, WEBHOOK_URL).await;
    let created = server.ok("create_workflow", blueprint).await;
    let id = created["id"].as_str().expect("an id");

    let removed = server.command("lf-mcp-stdio connection remove --ref team-slack", "").await;
    assert!(removed.starts_with("removed connection"), "{removed}");
    let report = server.ok("validate_workflow", json!({"workflow_id": id})).await;
    assert_eq!(report["errors"][0]["code"], "CONNECTION_UNKNOWN", "{report}");
    assert_eq!(report["run_ready"], false, "{report}");
    let run = server.call("run_workflow", json!({"workflow_id": id})).await;
    assert_eq!(run.code(), Some("INVALID_ARGUMENT"), "{}", run.brief());
    assert_eq!(run.value["details"]["errors"][0]["code"], "CONNECTION_UNKNOWN", "{}", run.value);
    server.stop().await;
}

/// The commands of a shell script, each as its words, as `sh` splits
/// them: an unquoted newline ends a command unless `\\` comes before it,
/// quotes keep what they hold, `#` starts a comment, and `$NAME` in double
/// quotes is taken from `vars` (another variable fails).
fn shell_commands(script: &str, vars: &HashMap<&str, String>) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'\n') => {
                chars.next();
            }
            '\n' => {
                words.extend(word.take());
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            '#' if word.is_none() => while chars.next_if(|&c| c != '\n').is_some() {},
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                w.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                let quoted: String = chars.by_ref().take_while(|&c| c != '"').collect();
                let mut rest = quoted.as_str();
                while let Some(at) = rest.find('$') {
                    w.push_str(&rest[..at]);
                    let after = &rest[at + 1..];
                    let len =
                        after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
                    let name = &after[..len];
                    w.push_str(vars.get(name).unwrap_or_else(|| panic!("${name} is not set in: {script}")));
                    rest = &after[len..];
                }
                w.push_str(rest);
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    if !words.is_empty() {
        commands.push(words);
    }
    commands
}

/// The README's curl commands (`<!-- example: curl -->` blocks), sent to
/// lf-mcp-http serving in process with a token of its own: each is
/// answered 200 with a JSON-RPC result that is no error. Their address is
/// the default one (`127.0.0.1:8080`), their token `$TOKEN`, made by
/// `admin issue-token`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_curl_command_of_the_readme_is_answered_over_http() {
    let text = readme();
    let store = lf_tests::TestStore::open(lf_tests::StoreKind::Http).await;
    let lf_tests::Caller::Http { client, url, token } =
        store.caller(lf_tests::lenser(lf_core::LenserId::new())).await
    else {
        panic!("an HTTP store has HTTP callers")
    };
    let vars = HashMap::from([("TOKEN", token)]);
    let mut sent = 0;
    let mut agreed: Option<String> = None;
    for block in blocks(&text).into_iter().filter(|b| b.marker == Some("curl")) {
        let at = format!("README.md:{}", block.line);
        for words in shell_commands(block.body, &vars) {
            match words[0].as_str() {
                w if w.starts_with("TOKEN=$(") => {
                    let made = words.join(" ");
                    assert!(
                        made.contains("lf-mcp-http admin issue-token"),
                        "{at}: the token is issued: {made}"
                    );
                }
                "curl" => {
                    let request = Curl::parse(&words[1..], &at);
                    let message: Value = serde_json::from_str(&request.body).expect("a JSON body");
                    let initialize = message["method"] == "initialize";
                    let version = request.header("mcp-protocol-version");
                    assert!(
                        initialize || version == Some("2026-07-28") || version == agreed.as_deref(),
                        "{at}: after initialize, a request names the version agreed ({agreed:?}): {version:?}"
                    );
                    let (status, answer) = request.send(&client, &url, &at).await;
                    assert_eq!(status, 200, "{at}: {words:?}: {answer}");
                    assert!(answer.get("error").is_none(), "{at}: {answer}");
                    assert_ne!(answer["result"]["isError"], true, "{at}: {answer}");
                    assert!(answer["result"].is_object(), "{at}: {answer}");
                    if initialize {
                        agreed = answer["result"]["protocolVersion"].as_str().map(str::to_owned);
                    }
                    sent += 1;
                }
                other => panic!("{at}: the test runs curl only, not {other}"),
            }
        }
    }
    assert!(sent >= 3, "the README's curl commands: {sent}");
}

/// What a curl command sends: its headers and its body.
struct Curl {
    headers: Vec<(String, String)>,
    body: String,
}

impl Curl {
    /// The request of curl's `args` (`-s`, `-H`, `-d` and the server's
    /// default address).
    fn parse(args: &[String], at: &str) -> Curl {
        let mut address = None;
        let mut headers = Vec::new();
        let mut body = None;
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = || args.next().unwrap_or_else(|| panic!("{at}: {arg} needs a value")).clone();
            match arg.as_str() {
                "-s" | "-sS" => {}
                "-H" => {
                    let header = value();
                    let (name, v) = header.split_once(": ").unwrap_or_else(|| panic!("{at}: {header}"));
                    headers.push((name.to_ascii_lowercase(), v.to_owned()));
                }
                "-d" => body = Some(value()),
                a if !a.starts_with('-') => address = Some(a.to_owned()),
                other => panic!("{at}: curl's {other} is not one the test knows"),
            }
        }
        assert_eq!(address.as_deref(), Some("http://127.0.0.1:8080/mcp"), "{at}: the default address");
        Curl { headers, body: body.unwrap_or_else(|| panic!("{at}: curl posts a body")) }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Sends it to `url` instead of the default address: the status and
    /// the JSON answer.
    async fn send(&self, client: &reqwest::Client, url: &str, at: &str) -> (u16, Value) {
        let mut request = client.post(url).body(self.body.clone());
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status().as_u16();
        let text = response.text().await.expect("a body");
        (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{at}: not JSON ({e}): {text}")))
    }
}
