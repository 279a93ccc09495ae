//! `bench-agent`: what acting through an agent costs over stdio. Rounds of
//! get_lens called directly and the same get_lens called through
//! `run_agent_action` by an agent granted it (the grant, the policy, the
//! day's caps counted in the database and the action log written) alternate
//! on the release stdio binary pinned to one core, over a SQLite database
//! of public lenses; with `--baseline`, rounds of the bare rmcp echo server
//! too. Prints calls/s and the agent's overhead against the direct call:
//! from the medians, and round by round (each round's two runs are next to
//! each other, so their ratio holds while the machine's speed drifts).

use std::path::Path;

use lf_agent::{AgentLimits, AgentPatch, AgentService, Cap, NewAgent};
use lf_core::{LenserId, Principal, Scopes};

use crate::bench::{
    Calls, arg_usize, echo_binary, median_of, pin_this_process, seed, server_binary, server_command,
    stdio_round, workdir,
};

/// A fresh agent of a fresh owner, granted get_lens, its tool-call cap at
/// the most a day allows (each round gets its own, so no cap is reached).
async fn agent(db: &lf_store::Database) -> Result<LenserId, String> {
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
    Ok(a.id)
}

pub fn run(args: &[String], root: &Path) -> Result<(), String> {
    let n = arg_usize(args, "--lenses", 10_000);
    let calls = arg_usize(args, "--calls", 4_000) as u64;
    let rounds = arg_usize(args, "--rounds", 3);
    if calls > u64::from(Cap::MAX) {
        return Err(format!("--calls is at most {} (an agent's daily cap of tool calls)", Cap::MAX));
    }
    let bin = server_binary(args, root, "lf-mcp-stdio")?;
    let echo = echo_binary(args, root)?;
    pin_this_process(1);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let dir = workdir("bench-agent");
        let url = format!("sqlite://{}", dir.join("bench.db").display());
        let db = lf_store::Database::connect(&url).await.map_err(|e| e.to_string())?;
        eprintln!("seeding {n} lenses into {url}");
        let ids = seed(db.lens_store(), n).await;
        let server = || {
            let mut c = server_command(&bin);
            c.env("LENSERFIGHT_DATABASE_URL", &url).env("LENSERFIGHT_LOG", "warn");
            c
        };
        println!("stdio: {calls} tools/call of get_lens over {n} lenses on SQLite, server on one core:");
        for pipelined in [false, true] {
            let mode = if pipelined { "pipelined" } else { "sequential" };
            let (mut direct, mut through, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..rounds {
                let a = agent(&db).await?;
                direct.push(stdio_round(server(), Calls::GetLens, &ids, calls, pipelined).await?);
                through.push(stdio_round(server(), Calls::AgentGetLens(a), &ids, calls, pipelined).await?);
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
        db.close().await;
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    })
}
