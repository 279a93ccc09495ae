//! `bench-agent`: what acting through an agent costs.
//!
//! Over stdio: rounds of get_lens called directly and the same get_lens
//! called through `run_agent_action` by an agent granted it (the grant, the
//! policy, the day's caps counted in the database and the action log
//! written) alternate on the release stdio binary pinned to one core, over
//! a SQLite database of public lenses; with `--baseline`, rounds of the
//! bare rmcp echo server too. Prints calls/s and the agent's overhead
//! against the direct call: from the medians, and round by round (each
//! round's two runs are next to each other, so their ratio holds while the
//! machine's speed drifts).
//!
//! In this process (`--no-stdio` for these alone): where an agent call's
//! time goes ([`in_process`]): the agent's checks alone, next to get_lens
//! and run_agent_action through the catalog.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use lf_agent::{ActionName, AgentLimits, AgentPatch, AgentService, ArgsSummary, Call, Cap, NewAgent};
use lf_core::{LensId, LenserId, Principal, Scopes};
use lf_tools::{Catalog, CatalogOptions, LfServer};
use serde_json::{Map, Value, json};

use crate::bench::{
    Calls, arg_usize, echo_binary, median_of, median_shown, pin_this_process, seed, server_binary,
    server_command, stdio_round, workdir,
};

/// A tool call's arguments.
type JsonObject = Map<String, Value>;

/// A fresh agent of a fresh owner, granted get_lens, its tool-call cap at
/// the most a day allows (each round gets its own, so no cap is reached),
/// and its owner.
async fn agent(db: &lf_store::Database) -> Result<(LenserId, Principal), String> {
    let agents = AgentService::new(db.agent_store(), db.lenser_handles()).with_limits(AgentLimits::default());
    let owner = LenserId::new();
    let me = Principal::Lenser { id: owner, scopes: Scopes::READ_WRITE };
    let handle = format!("bench_{}", &owner.to_string()[24..]);
    let new = NewAgent::new(
        lf_agent::AgentHandle::parse(&handle).map_err(|e| e.to_string())?,
        lf_agent::DisplayName::parse("Bench bot").map_err(|e| e.to_string())?,
    );
    let a = agents.create(&me, new).await.map_err(|e| e.to_string())?;
    let patch = AgentPatch { max_daily_tool_calls: Some(Cap::of(Cap::MAX)), ..AgentPatch::default() };
    agents.update(&me, a.id, patch).await.map_err(|e| e.to_string())?;
    let tool =
        lf_tools::agent_calls::tool_ref(lf_tools::agent_calls::catalog().get("get_lens").expect("get_lens"));
    agents.assign_tool(&me, a.id, tool, false).await.map_err(|e| e.to_string())?;
    Ok((a.id, me))
}

pub fn run(args: &[String], root: &Path) -> Result<(), String> {
    let n = arg_usize(args, "--lenses", 10_000);
    let calls = arg_usize(args, "--calls", 4_000) as u64;
    let rounds = arg_usize(args, "--rounds", 3);
    if calls > u64::from(Cap::MAX) {
        return Err(format!("--calls is at most {} (an agent's daily cap of tool calls)", Cap::MAX));
    }
    let stdio = !args.iter().any(|a| a == "--no-stdio");
    let (bin, echo) = match stdio {
        true => (Some(server_binary(args, root, "lf-mcp-stdio")?), echo_binary(args, root)?),
        false => (None, None),
    };
    pin_this_process(1);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let dir = workdir("bench-agent");
        let url = format!("sqlite://{}", dir.join("bench.db").display());
        let db = lf_store::Database::connect(&url).await.map_err(|e| e.to_string())?;
        eprintln!("seeding {n} lenses into {url}");
        let ids = seed(db.lens_store(), n).await;
        let server = |bin: &Path| {
            let mut c = server_command(bin);
            c.env("LENSERFIGHT_DATABASE_URL", &url).env("LENSERFIGHT_LOG", "warn");
            c
        };
        let mut direct_per_call = Vec::new();
        if bin.is_some() {
            println!("stdio: {calls} tools/call of get_lens over {n} lenses on SQLite, server on one core:");
        }
        for (bin, pipelined) in bin.iter().flat_map(|b| [(b, false), (b, true)]) {
            let mode = if pipelined { "pipelined" } else { "sequential" };
            let (mut direct, mut through, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..rounds {
                let (a, _) = agent(&db).await?;
                direct.push(stdio_round(server(bin), Calls::GetLens, &ids, calls, pipelined).await?);
                through.push(stdio_round(server(bin), Calls::AgentGetLens(a), &ids, calls, pipelined).await?);
                if let Some(echo) = &echo {
                    theirs.push(stdio_round(server_command(echo), Calls::Echo, &[], calls, pipelined).await?);
                }
            }
            // Each round's direct and agent runs are next to each other:
            // their ratio holds while the machine's speed drifts between
            // rounds, which the ratio of the medians does not.
            let overhead = |d: f64, t: f64| (d / t - 1.0) * 100.0;
            let paired: Vec<f64> = direct.iter().zip(&through).map(|(d, t)| overhead(*d, *t)).collect();
            let (d, d_runs) = median_of(direct);
            direct_per_call.push((mode, 1e6 / d));
            let (t, t_runs) = median_of(through);
            println!("  {mode:<10} get_lens          median {d:>8.0} calls/s  (runs: {d_runs})");
            println!(
                "  {:<10} run_agent_action  median {t:>8.0} calls/s  (runs: {t_runs}); {:.2}x the direct call, overhead {:.0}% of its time",
                "",
                t / d,
                overhead(d, t)
            );
            let (p, p_runs) = median_of(paired);
            println!(
                "  {:<10} overhead round by round: median {p:.0}% of the direct call's time  (rounds: {p_runs})",
                ""
            );
            if !theirs.is_empty() {
                let (e, runs) = median_of(theirs);
                println!(
                    "  {:<10} rmcp bare echo    median {e:>8.0} calls/s  (runs: {runs}); get_lens/echo {:.2}, run_agent_action/echo {:.2}",
                    "",
                    d / e,
                    t / e
                );
            }
        }
        // Three kinds of calls count against a round's agent's cap.
        in_process(&db, &ids, calls.min(u64::from(Cap::MAX) / 3), rounds, &direct_per_call).await?;
        db.close().await;
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    })
}

/// Times calls awaited one at a time: µs per call.
struct Timer {
    started: Instant,
    calls: u32,
}

impl Timer {
    fn start() -> Self {
        Timer { started: Instant::now(), calls: 0 }
    }

    /// Awaits `call`; an error names `what`.
    async fn call<T, E: std::fmt::Display>(
        &mut self,
        what: &str,
        call: impl Future<Output = Result<T, E>>,
    ) -> Result<T, String> {
        self.calls += 1;
        call.await.map_err(|e| format!("{what}: {e}"))
    }

    fn per_call(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1e6 / f64::from(self.calls.max(1))
    }
}

/// Where an agent call's time goes, in this process on the same database
/// (the servers' wiring, their call ledger flushing, one call at a time,
/// no transport), each kind after the other in every round:
/// - get_lens through the catalog;
/// - the agent's checks alone (`check_call`: the agent and its grant
///   read, the policy, the day's caps counted), each in a call of its own,
///   so with the database look a call's first cached read makes (which
///   get_lens makes too, and which in an agent call the checks make and
///   the tool's own read then skips);
/// - the same checks after the look, taken by a read of the lens first in
///   the same call: what the checks add to a call;
/// - run_agent_action get_lens through the catalog (the checks, the action
///   log written to its last entry, the answer's envelope).
///
/// Every lens is read once before the rounds, and every round reads the
/// same lenses in the same order; each round has a fresh agent. `stdio`
/// is get_lens's time over stdio, one at a time and pipelined, when those
/// rounds ran (µs per call).
async fn in_process(
    db: &lf_store::Database,
    ids: &[LensId],
    calls: u64,
    rounds: usize,
    stdio: &[(&str, f64)],
) -> Result<(), String> {
    let (services, _runner) = lf_server::services(
        db,
        Arc::new(lf_model::OfflineProvider),
        lf_server::Background::new(tokio::runtime::Handle::current()),
        lf_server::KeySealer::new(None),
        &lf_server::RunSettings::default(),
    );
    let ledger = lf_server::AgentLedger::new(services.agents.clone());
    ledger.start();
    let server = LfServer::new(
        Arc::new(Catalog::new()),
        services.clone(),
        CatalogOptions::default(),
        Principal::Service { acting_as: None },
    );
    let spec = lf_tools::agent_calls::catalog().get("get_lens").expect("get_lens");
    let lens = |i: u64| ids[(i as usize * 7919) % ids.len()];
    let object = |v: Value| v.as_object().cloned().expect("an object");
    let get_lens = |i: u64| object(json!({"lens_id": lens(i).to_string()}));
    let answered = |o: Result<lf_tools::ToolOutput, _>| match o {
        Ok(o) if !o.is_error() => Ok(()),
        Ok(o) => Err(o.text().to_owned()),
        Err(e) => Err(format!("{e:?}")),
    };
    // The call run_agent_action makes of get_lens's arguments (with its
    // summary as call_as_agent writes it).
    let asked = |i: u64| {
        Call::new(lf_tools::agent_calls::tool_ref(spec), 0).asked_as(
            ActionName::parse("action_type", "get_lens").expect("a word"),
            ArgsSummary::new(&Value::Object(get_lens(i)).to_string()),
        )
    };
    let reader = Principal::Service { acting_as: None };
    for i in 0..ids.len() as u64 {
        answered(server.call_as(reader.clone(), "get_lens", get_lens(i)).await)?;
    }
    let agents = &services.agents;
    let (mut direct, mut alone, mut added, mut through) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (agent, me) = agent(db).await?;
        let gets: Vec<JsonObject> = (1..=calls).map(get_lens).collect();
        let mut t = Timer::start();
        for args in gets {
            t.call("get_lens", async { answered(server.call_as(me.clone(), "get_lens", args).await) })
                .await?;
        }
        direct.push(t.per_call());

        let checks: Vec<Call> = (1..=calls).map(asked).collect();
        let mut t = Timer::start();
        for call in &checks {
            t.call("check_call", lf_tools::mcp::one_call(agents.check_call(&me, agent, call))).await?;
        }
        alone.push(t.per_call());

        let mut spent = std::time::Duration::ZERO;
        for (i, call) in (1..=calls).zip(&checks) {
            lf_tools::mcp::one_call(async {
                services.lens.get(&me, lens(i)).await.map_err(|e| e.to_string())?;
                let started = Instant::now();
                agents.check_call(&me, agent, call).await.map_err(|e| e.to_string())?;
                spent += started.elapsed();
                Ok::<_, String>(())
            })
            .await?;
        }
        added.push(spent.as_secs_f64() * 1e6 / calls as f64);

        let actions: Vec<JsonObject> = (1..=calls)
            .map(|i| {
                object(json!({"ai_lenser_id": agent.to_string(), "action_type": "get_lens", "metadata": get_lens(i)}))
            })
            .collect();
        let mut t = Timer::start();
        for args in actions {
            t.call("run_agent_action", async {
                answered(server.call_as(me.clone(), "run_agent_action", args).await)
            })
            .await?;
        }
        // The action log written to its last entry.
        agents.flush().await.map_err(|e| e.to_string())?;
        through.push(t.per_call());
    }
    ledger.close().await;
    let share = |part: &[f64]| median_shown(direct.iter().zip(part).map(|(d, p)| p / d * 100.0).collect(), 0);
    println!(
        "in process, one at a time ({calls} calls a round, {rounds} rounds; the catalog without a transport, the same database, warm):"
    );
    let line = |name: &str, figures: &[f64]| {
        let (m, runs) = median_shown(figures.to_vec(), 2);
        let (p, rounds) = share(figures);
        println!(
            "  {name:<38} median {m:>6.2} us/call (runs: {runs}); {p:.0}% of get_lens round by round ({rounds})"
        );
        m
    };
    let (d, runs) = median_shown(direct.clone(), 2);
    println!("  {:<42} median {d:>6.2} us/call (runs: {runs})", "get_lens");
    let a = line("the agent's checks, in a call of their own", &alone);
    let c = line("the agent's checks, after the call's look", &added);
    line("run_agent_action get_lens, log written", &through);
    for (mode, per_call) in stdio {
        println!(
            "  the checks are {:.0}% (in a call of their own) and {:.0}% (after the look) of get_lens over stdio {mode} ({per_call:.2} us/call)",
            a / per_call * 100.0,
            c / per_call * 100.0
        );
    }
    Ok(())
}
