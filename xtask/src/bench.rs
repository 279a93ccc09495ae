//! Benchmarks that print figures (never timed assertions):
//! - `bench-stdio`: 20,000 `tools/call` requests of get_lens and run_lens piped
//!   into the release stdio binary (pinned to one core) over a SQLite database
//!   of 10,000 lenses, one at a time and pipelined; every answer is checked.
//!   With `--baseline`, rounds of a bare rmcp echo server (the yardstick the
//!   aims are set against) alternate with the server's, and both are printed.
//! - `bench-search`: search_lenses over 100,000 lenses on SQLite: p50/p99 of a
//!   selective query (under 100 hits) and a broad one (over 10,000 hits).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lf_core::{LensId, LenserId, PageRequest, Principal, Reach};
use lf_lens::{LensService, LensStore, NewLens, SearchQuery, TemplateBody, Title, Visibility};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The value after `name` in `args`, if given.
fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.windows(2).find(|w| w[0] == name).map(|w| w[1].as_str())
}

pub(crate) fn arg_usize(args: &[String], name: &str, default: usize) -> usize {
    arg(args, name).and_then(|v| v.parse().ok()).unwrap_or(default)
}

const WORDS: &[&str] = &[
    "review",
    "code",
    "essay",
    "summary",
    "email",
    "poem",
    "story",
    "plan",
    "brief",
    "logo",
    "marketing",
    "rust",
    "python",
    "design",
    "test",
    "bug",
    "security",
    "performance",
    "translate",
    "outline",
    "interview",
    "recipe",
    "travel",
    "lesson",
    "quiz",
    "tweet",
    "report",
    "proposal",
    "pitch",
    "release",
];

/// A deterministic pseudo-random sequence (xorshift), so runs compare.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// Creates `n` lenses through the service, as a user would, with bodies of
/// a few hundred bytes and 3 parameters. Lens `i` has the word `tagNNNN`
/// (i / 100) in its title, so a query for one tag matches 100 lenses.
pub(crate) async fn seed(store: Arc<dyn LensStore>, n: usize) -> Vec<LensId> {
    let service = LensService::new(store);
    let me = Principal::Service { acting_as: Some(LenserId::new()) };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut ids = Vec::with_capacity(n);
    let started = Instant::now();
    for i in 0..n {
        let (a, b, c) = (rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS));
        let title = format!("{a} {b} tag{:04} lens {i}", i / 100);
        let body = format!(
            "You are an expert in {a} and {b}. Write a {c} about [[Topic]] for [[Audience]]. \
             Keep it [[Tone!]] and practical. Mention {a}, {b} and {c} where they help, \
             with concrete examples, and end with three next steps the reader can take today."
        );
        let view = service
            .create(
                &me,
                NewLens {
                    title: Title::parse(title).unwrap(),
                    description: None,
                    body: TemplateBody::parse(body).unwrap(),
                    visibility: Visibility::Public,
                    params: vec![],
                },
            )
            .await
            .expect("seeding a lens");
        ids.push(view.lens.id);
        if (i + 1).is_multiple_of(10_000) {
            eprintln!("  seeded {} lenses ({:.1} s)", i + 1, started.elapsed().as_secs_f64());
        }
    }
    ids
}

pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

pub(crate) fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lenserfight-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    dir
}

pub fn search(args: &[String]) -> Result<(), String> {
    let n = arg_usize(args, "--lenses", 100_000);
    let runs = arg_usize(args, "--runs", 200);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let dir = workdir("bench-search");
        let url = format!("sqlite://{}", dir.join("bench.db").display());
        let db = lf_store::Database::connect(&url).await.map_err(|e| e.to_string())?;
        eprintln!("seeding {n} lenses into {url}");
        seed(db.lens_store(), n).await;
        let store = db.lens_store();
        let reach = Reach::Lenser(LenserId::new());
        let cases = [
            ("selective", format!("tag{:04}", (n / 100) / 2), 0usize, 100usize),
            ("broad", "expert".to_owned(), 10_001, usize::MAX),
        ];
        println!("search_lenses over {n} lenses on SQLite, {runs} runs each (first page of 20):");
        for (name, q, min_hits, max_hits) in cases {
            let query = SearchQuery::parse(&q).unwrap();
            let mut times = Vec::with_capacity(runs);
            let mut total = 0;
            for _ in 0..runs {
                let t = Instant::now();
                let page = store
                    .search_lenses(reach, &query, None, PageRequest::default())
                    .await
                    .map_err(|e| e.to_string())?;
                times.push(t.elapsed());
                total = page.total as usize;
                assert!(!page.items.is_empty());
            }
            if total < min_hits || total > max_hits {
                return Err(format!("{name} query {q:?} matched {total}, outside its intended range"));
            }
            times.sort();
            println!(
                "  {name:<9} query {q:<10} hits {total:>6}  p50 {:>8.3} ms  p99 {:>8.3} ms  max {:>8.3} ms",
                percentile(&times, 0.50).as_secs_f64() * 1e3,
                percentile(&times, 0.99).as_secs_f64() * 1e3,
                times.last().unwrap().as_secs_f64() * 1e3,
            );
        }
        db.close().await;
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    })
}

/// What a benchmark calls: the LenserFight tools, or the yardstick's `echo`
/// (a bare rmcp server, the `echo` example of lf-mcp-http).
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Calls {
    /// get_lens and run_lens alternating, over the seeded lenses.
    Lenses,
    /// `echo` with a short message.
    Echo,
    /// get_lens alone, over the seeded lenses.
    GetLens,
    /// get_lens called through `run_agent_action` as this agent.
    AgentGetLens(LenserId),
}

impl Calls {
    /// The JSON-RPC `tools/call` request with id `id`.
    pub(crate) fn request(self, id: u64, lenses: &[LensId]) -> String {
        let call = match self {
            Calls::Echo => json!({"name": "echo", "arguments": {"message": "tides for kids"}}),
            Calls::GetLens => {
                json!({"name": "get_lens", "arguments": {"lens_id": lenses[(id as usize * 7919) % lenses.len()].to_string()}})
            }
            Calls::AgentGetLens(agent) => {
                let lens = lenses[(id as usize * 7919) % lenses.len()].to_string();
                json!({"name": "run_agent_action", "arguments": {
                    "ai_lenser_id": agent.to_string(), "action_type": "get_lens", "metadata": {"lens_id": lens},
                }})
            }
            Calls::Lenses => {
                let lens = lenses[(id as usize * 7919) % lenses.len()].to_string();
                if id.is_multiple_of(2) {
                    json!({"name": "get_lens", "arguments": {"lens_id": lens}})
                } else {
                    json!({"name": "run_lens", "arguments": {"lens_id": lens, "param_values": {"Topic": "tides", "Audience": "kids"}}})
                }
            }
        };
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": call}).to_string()
    }

    /// The id of `answer` when it is a successful answer to such a call.
    /// Only the fields checked are read, nothing else is built, so that
    /// reading answers does not hold the benchmark back.
    pub(crate) fn check(self, answer: &[u8]) -> Result<u64, String> {
        let failed = |why: &str| format!("{why}: {}", String::from_utf8_lossy(answer));
        let reply: Reply =
            serde_json::from_slice(answer).map_err(|e| failed(&format!("not an answer ({e})")))?;
        let result = reply.result.ok_or_else(|| failed("not a result"))?;
        let answered = result.is_error == Some(false)
            && match self {
                Calls::Lenses | Calls::GetLens | Calls::AgentGetLens(_) => result.structured.is_some(),
                Calls::Echo => {
                    result.content.first().and_then(|b| b.text.as_deref()) == Some("tides for kids")
                }
            };
        if !answered {
            return Err(failed("a call failed"));
        }
        reply.id.ok_or_else(|| failed("no id"))
    }
}

/// What [`Calls::check`] reads of an answer.
#[derive(Deserialize)]
struct Reply<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    result: Option<ReplyResult<'a>>,
}

#[derive(Deserialize)]
struct ReplyResult<'a> {
    #[serde(rename = "isError")]
    is_error: Option<bool>,
    #[serde(rename = "structuredContent")]
    structured: Option<AnObject>,
    #[serde(borrow, default)]
    content: Vec<Block<'a>>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

/// A JSON object, its entries read past.
struct AnObject;

impl<'de> Deserialize<'de> for AnObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = AnObject;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<AnObject, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(AnObject)
            }
        }
        d.deserialize_map(Entries)
    }
}

/// The yardstick's binary when `--baseline` is given: `--echo-bin PATH`
/// when given, else the `echo` example of lf-mcp-http built in release mode.
pub(crate) fn echo_binary(args: &[String], root: &Path) -> Result<Option<PathBuf>, String> {
    if !args.iter().any(|a| a == "--baseline") {
        return Ok(None);
    }
    if let Some(path) = arg(args, "--echo-bin") {
        return Ok(Some(PathBuf::from(path)));
    }
    cargo_release(root, &["-p", "lf-mcp-http", "--example", "echo"])?;
    Ok(Some(release_dir(root).join("examples").join("echo")))
}

/// One run of `calls` requests through a fresh server process; calls/s.
pub(crate) async fn stdio_round(
    mut server: tokio::process::Command,
    kind: Calls,
    lenses: &[LensId],
    calls: u64,
    pipelined: bool,
) -> Result<f64, String> {
    let mut child = server
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("starting the server: {e}"))?;
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}});
    stdin.write_all(format!("{init}\n").as_bytes()).await.map_err(|e| e.to_string())?;
    stdout.next_line().await.map_err(|e| e.to_string())?.ok_or("no initialize answer")?;
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .map_err(|e| e.to_string())?;
    let lines: Vec<String> = (1..=calls).map(|i| kind.request(i, lenses) + "\n").collect();
    let started = Instant::now();
    if pipelined {
        let writer = tokio::spawn(async move {
            for l in lines {
                stdin.write_all(l.as_bytes()).await?;
            }
            stdin.flush().await?;
            Ok::<_, std::io::Error>(stdin)
        });
        let mut seen = vec![false; calls as usize + 1];
        for _ in 0..calls {
            let line =
                stdout.next_line().await.map_err(|e| e.to_string())?.ok_or("the server stopped answering")?;
            let id = kind.check(line.as_bytes())?;
            seen[id as usize] = true;
        }
        let elapsed = started.elapsed();
        drop(writer.await.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?);
        if !seen[1..].iter().all(|s| *s) {
            return Err("some requests were not answered".into());
        }
        let _ = child.wait().await;
        Ok(calls as f64 / elapsed.as_secs_f64())
    } else {
        for (i, l) in lines.iter().enumerate() {
            stdin.write_all(l.as_bytes()).await.map_err(|e| e.to_string())?;
            let line =
                stdout.next_line().await.map_err(|e| e.to_string())?.ok_or("the server stopped answering")?;
            if kind.check(line.as_bytes())? != i as u64 + 1 {
                return Err("answers out of order".into());
            }
        }
        let elapsed = started.elapsed();
        drop(stdin);
        let _ = child.wait().await;
        Ok(calls as f64 / elapsed.as_secs_f64())
    }
}

/// `bin` started pinned to core 0 (when taskset is there).
pub(crate) fn server_command(bin: &Path) -> tokio::process::Command {
    if Path::new("/usr/bin/taskset").exists() {
        let mut c = tokio::process::Command::new("/usr/bin/taskset");
        c.args(["-c", "0"]).arg(bin);
        c
    } else {
        tokio::process::Command::new(bin)
    }
}

/// Pins every thread of this process to `core` (when taskset is there), so
/// a load generator stays off the server's core.
pub(crate) fn pin_this_process(core: usize) {
    if Path::new("/usr/bin/taskset").exists() {
        let pid = std::process::id().to_string();
        let _ = std::process::Command::new("/usr/bin/taskset")
            .args(["-a", "-p", "-c", &core.to_string(), &pid])
            .stdout(Stdio::null())
            .status();
    }
}

/// The server binary to measure: `--bin PATH` when given (to compare two
/// builds), else `package` built in release mode.
pub(crate) fn server_binary(args: &[String], root: &Path, package: &str) -> Result<PathBuf, String> {
    match arg(args, "--bin") {
        Some(path) => Ok(PathBuf::from(path)),
        None => build_release(root, package),
    }
}

/// Builds `package` in release mode; the path of its binary.
fn build_release(root: &Path, package: &str) -> Result<PathBuf, String> {
    cargo_release(root, &["-p", package])?;
    Ok(release_dir(root).join(package))
}

/// `cargo build --release` with `what`.
fn cargo_release(root: &Path, what: &[&str]) -> Result<(), String> {
    let status = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release"])
        .args(what)
        .current_dir(root)
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("cargo build --release {} failed", what.join(" ")));
    }
    Ok(())
}

/// Where cargo puts release builds: under CARGO_TARGET_DIR when set
/// (relative to the root).
fn release_dir(root: &Path) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |d| root.join(d));
    target.join("release")
}

/// The median of `rates` and all of them, as printed.
pub(crate) fn median_of(rates: Vec<f64>) -> (f64, String) {
    median_shown(rates, 0)
}

/// The median of `figures` and all of them in order, to `places` decimals.
pub(crate) fn median_shown(mut figures: Vec<f64>, places: usize) -> (f64, String) {
    figures.sort_by(f64::total_cmp);
    let shown = figures.iter().map(|f| format!("{f:.places$}")).collect::<Vec<_>>().join(", ");
    (figures[figures.len() / 2], shown)
}

pub fn stdio(args: &[String], root: &Path) -> Result<(), String> {
    let n = arg_usize(args, "--lenses", 10_000);
    let calls = arg_usize(args, "--calls", 20_000) as u64;
    let rounds = arg_usize(args, "--rounds", 3);
    let bin = server_binary(args, root, "lf-mcp-stdio")?;
    let echo = echo_binary(args, root)?;
    // The server runs on core 0; the client stays on the other.
    pin_this_process(1);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let dir = workdir("bench-stdio");
        let url = format!("sqlite://{}", dir.join("bench.db").display());
        let db = lf_store::Database::connect(&url).await.map_err(|e| e.to_string())?;
        eprintln!("seeding {n} lenses into {url}");
        let ids = seed(db.lens_store(), n).await;
        db.close().await;
        let lenserfight = || {
            let mut c = server_command(&bin);
            c.env("LENSERFIGHT_DATABASE_URL", &url).env("LENSERFIGHT_LOG", "warn");
            c
        };
        println!("stdio: {calls} tools/call (get_lens and run_lens alternating) over {n} lenses on SQLite, server on one core:");
        for pipelined in [false, true] {
            let mode = if pipelined { "pipelined" } else { "sequential" };
            // With the yardstick, its rounds alternate with the server's, so
            // that both meet the machine in the same state.
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                ours.push(stdio_round(lenserfight(), Calls::Lenses, &ids, calls, pipelined).await?);
                if let Some(echo) = &echo {
                    theirs.push(stdio_round(server_command(echo), Calls::Echo, &[], calls, pipelined).await?);
                }
            }
            let (median, runs) = median_of(ours);
            println!("  {mode:<10} median {median:>8.0} calls/s  (runs: {runs})");
            if !theirs.is_empty() {
                let (echo_median, runs) = median_of(theirs);
                println!(
                    "  {:<10} median {echo_median:>8.0} calls/s  (runs: {runs}) rmcp bare echo; LenserFight/echo {:.2}",
                    "", median / echo_median
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::Calls;

    #[test]
    fn answers_are_checked() {
        let good = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{"a":[1,{"b":null}]},"isError":false}}"#;
        assert_eq!(Calls::Lenses.check(good), Ok(7));
        let echo = br#"{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"tides for kids"}],"isError":false}}"#;
        assert_eq!(Calls::Echo.check(echo), Ok(8));
        for bad in [
            &br#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{},"isError":true}}"#[..],
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":[1],"isError":false}}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":false}}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{"structuredContent":{}}}"#,
            br#"{"jsonrpc":"2.0","result":{"structuredContent":{},"isError":false}}"#,
            br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{"structuredContent":{},"isError":false}"#,
        ] {
            assert!(Calls::Lenses.check(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        assert!(Calls::Echo.check(good).is_err());
        assert!(Calls::Lenses.check(echo).is_err());
    }
}
