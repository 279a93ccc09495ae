//! `cargo xtask <task>`: development tasks.
//!
//! - `gen-docs`: renders docs/tools.md and the README's tool table from the
//!   live catalog. `cargo test -p xtask` fails when either is stale.
//! - `check-arch`: ARCHITECTURE.md has a section for every crate, names
//!   only paths that exist and stays short (`cargo test -p xtask` runs it).
//! - `catalog-size [--toolsets lens,battle] [--read-only] [--icon-base URL | --stdio]`:
//!   what `tools/list` costs an assistant's context, per tool and in all,
//!   against the budget the catalog's lint test holds it to, as the HTTP
//!   server lists it with its public URL (the toolsets' icons named under
//!   `MEASURED_ICON_BASE`, or `--icon-base`) or, `--stdio`, with none.
//! - `bench-stdio [--lenses N] [--calls N] [--rounds N] [--bin PATH] [--baseline [--echo-bin PATH]]`:
//!   stdio throughput (with `--baseline`, next to a bare rmcp echo server).
//! - `bench-search [--lenses N] [--runs N]`: search latency on SQLite.
//! - `bench-http [--lenses N] [--requests N] [--bin PATH] [--baseline [--echo-bin PATH]]`: HTTP load
//!   at 1, 8 and 64 connections (with `--baseline`, next to a bare rmcp echo server).
//! - `bench-leaderboard [--battles N] [--contenders N] [--runs N] [--keep]`:
//!   get_leaderboard over SQLite on one core, with its load and fit timed apart
//!   (`--keep` leaves the database in place).
//! - `bench-workflow [--runs N]`: validate_workflow through the catalog on
//!   100, 1,000 and 10,000 nodes next to the validator alone, and
//!   create_workflow with 100 steps.
//! - `bench-runs [--runs N] [--probes N] [--runners N] [--database URL]`:
//!   workflow runs end to end (runs per second, start latency p50/p99) on
//!   the memory run store and on SQLite (or the given database).
//! - `bench-agent [--lenses N] [--calls N] [--rounds N] [--bin PATH] [--baseline [--echo-bin PATH]]`:
//!   get_lens over stdio called directly and through `run_agent_action` by
//!   an agent granted it, alternating (with `--baseline`, next to a bare
//!   rmcp echo server).
//! - `bench-battle [--contenders N] [--answer-ms N] [--rounds N]`: ai_model
//!   contenders answering by themselves on a loopback endpoint, from
//!   `set_battle_status executing` to `scoring`.
//! - `bench-experiment [--cases N] [--contenders N] [--answer-ms N] [--concurrency N] [--seeded N] [--reads N]`:
//!   an experiment's cells on a loopback endpoint over SQLite (wall time
//!   against the ideal, memory as the cells are written), and
//!   get_experiment's latency at 100,000 seeded cells.

// As in lf-mcp-stdio and lf-mcp-http: bench-search and bench-leaderboard
// measure the stores and the catalog in this process.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod arch;
mod bench;
mod bench_agent;
mod bench_battle;
mod bench_experiment;
mod bench_http;
mod bench_leaderboard;
mod bench_runs;
mod bench_workflow;
mod deps;
mod docs;

use std::path::PathBuf;
use std::process::ExitCode;

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace").to_path_buf()
}

fn report(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Prints the listing's size for the toolsets and mode asked for: with no
/// `--toolsets`, the default listing and then each opt-in group alone (each
/// held to `GROUP_BUDGET`).
fn catalog_size(args: &[String]) -> Result<(), String> {
    let mut options = lf_tools::CatalogOptions {
        icon_base: Some(lf_tools::MEASURED_ICON_BASE.to_owned()),
        ..Default::default()
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--read-only" => options.read_only = true,
            "--stdio" => options.icon_base = None,
            "--icon-base" => {
                let base = args.next().ok_or("--icon-base needs a URL, e.g. https://mcp.example.com")?;
                options.icon_base = Some(base.trim_end_matches('/').to_owned());
            }
            "--toolsets" => {
                let sets = args.next().ok_or("--toolsets needs a value, e.g. lens,battle")?;
                options.toolsets = Some(lf_tools::Group::parse_set([sets.as_str()])?);
            }
            other => {
                return Err(format!(
                    "unknown argument {other}; catalog-size takes --toolsets, --read-only, --icon-base and --stdio"
                ));
            }
        }
    }
    let catalog = lf_tools::Catalog::new();
    match &options.icon_base {
        Some(base) => {
            println!("as served over HTTP with the public URL {base} (the toolsets' icons under it)")
        }
        None => println!("as served over stdio (no public URL: no toolset's icon)"),
    }
    print!("{}", lf_tools::listing_size(&catalog, &options));
    if options.toolsets.is_none() {
        println!("budget of the default listing: {} bytes", lf_tools::LISTING_BUDGET);
        for g in lf_tools::Group::all().iter().filter(|g| !g.by_default) {
            let alone = lf_tools::CatalogOptions { toolsets: Some(vec![*g]), ..options.clone() };
            println!("\nopt-in group {} alone (--toolsets {}):", g.id, g.id);
            print!("{}", lf_tools::listing_size(&catalog, &alone));
            println!("budget of an opt-in group: {} bytes", lf_tools::GROUP_BUDGET);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen-docs") => match docs::write_all(&workspace_root()) {
            Ok(changed) => {
                for path in &changed {
                    eprintln!("updated {}", path.display());
                }
                if changed.is_empty() {
                    eprintln!("docs are up to date");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("gen-docs: {e}");
                ExitCode::FAILURE
            }
        },
        Some("check-arch") => report(arch::check(&workspace_root())),
        Some("catalog-size") => report(catalog_size(&args[1..])),
        Some("bench-stdio") => report(bench::stdio(&args[1..], &workspace_root())),
        Some("bench-search") => report(bench::search(&args[1..])),
        Some("bench-http") => report(bench_http::run(&args[1..], &workspace_root())),
        Some("bench-leaderboard") => report(bench_leaderboard::run(&args[1..])),
        Some("bench-workflow") => report(bench_workflow::run(&args[1..])),
        Some("bench-runs") => report(bench_runs::run(&args[1..])),
        Some("bench-agent") => report(bench_agent::run(&args[1..], &workspace_root())),
        Some("bench-battle") => report(bench_battle::run(&args[1..])),
        Some("bench-experiment") => report(bench_experiment::run(&args[1..])),
        _ => {
            eprintln!(
                "usage: cargo xtask gen-docs | check-arch | catalog-size | bench-stdio | bench-search | bench-http | bench-leaderboard | bench-workflow | bench-runs | bench-agent | bench-battle | bench-experiment"
            );
            ExitCode::from(2)
        }
    }
}
