//! `bench-battle`: ai_model contenders answering by themselves, on the
//! servers' wiring (lf_server::services over SQLite in a temporary
//! directory): `--contenders` (default 8) model profiles on one
//! `[[models]]` endpoint (concurrency 8) of a scripted OpenAI-compatible
//! server on loopback answering each request in `--answer-ms` (default
//! 200) ms. Each of `--rounds` (default 5) battles is moved to executing
//! through `set_battle_status`, and timed until it is in `scoring` (every
//! answer submitted, the last one moving it on). Printed: each round's
//! time, and the slowest as a multiple of one answer's time (the target:
//! at most 2x, not one answer after another).

#[path = "../../crates/lf-server/tests/support/fake_models.rs"]
pub(crate) mod fake_models; // bench-experiment's too

use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_models::{FakeModels, Step};
use lf_core::{LenserId, Principal, Scopes};
use lf_tools::{Catalog, CatalogOptions, Group, LfServer};
use serde_json::{Value, json};

use crate::bench::{arg_usize, workdir};

pub fn run(args: &[String]) -> Result<(), String> {
    let contenders = arg_usize(args, "--contenders", 8).clamp(2, 26);
    let answer_ms = arg_usize(args, "--answer-ms", 200) as u64;
    let rounds = arg_usize(args, "--rounds", 5).max(1);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let fake = FakeModels::start();
        let dir = workdir("bench-battle");
        let db = lf_server::Database::connect(&format!("sqlite:{}", dir.join("battle.db").display()))
            .await
            .map_err(|e| e.message().to_owned())?;
        let (s, _lenser, _runner) = wired(&fake, &db, 8)?;
        let mut profiles = Vec::new();
        for i in 0..contenders {
            let model = format!("bench-{i}");
            fake.script(&model, vec![Step::slow("An answer.", answer_ms)]);
            let p = call(&s, "create_model_profile", json!({"name": model, "endpoint": "fake", "model": model})).await?;
            profiles.push(p["profile_id"].as_str().unwrap_or_default().to_owned());
        }
        println!("bench-battle: {contenders} ai_model contenders, one endpoint (concurrency 8) answering in {answer_ms} ms, {rounds} rounds");
        let mut slowest = Duration::ZERO;
        for round in 0..rounds {
            let took = battle(&s, &profiles).await?;
            slowest = slowest.max(took);
            println!("  round {}: executing -> scoring in {:.1} ms", round + 1, took.as_secs_f64() * 1e3);
        }
        let ratio = slowest.as_secs_f64() * 1e3 / answer_ms as f64;
        println!("slowest: {:.1} ms = {ratio:.2}x one answer (target: at most 2x)", slowest.as_secs_f64() * 1e3);
        Ok(())
    })
}

pub(crate) async fn call(s: &LfServer, tool: &str, args: Value) -> Result<Value, String> {
    let r = s.call(tool, args.as_object().cloned().unwrap_or_default()).await.map_err(|e| e.to_string())?;
    let out = r.structured_content.clone().unwrap_or_default();
    if r.is_error == Some(true) {
        return Err(format!("{tool}: {out}"));
    }
    Ok(out)
}

/// One battle of `profiles`: how long from executing to scoring.
async fn battle(s: &LfServer, profiles: &[String]) -> Result<Duration, String> {
    let b = call(
        s,
        "create_battle",
        json!({"title": "Bench", "task_prompt": "Name a prime.", "max_contenders": profiles.len()}),
    )
    .await?;
    let id = b["id"].as_str().unwrap_or_default().to_owned();
    for (i, p) in profiles.iter().enumerate() {
        let args = json!({"battle_id": id, "display_name": format!("Model {i}"), "contender_type": "ai_model", "contender_ref_id": p});
        call(s, "add_battle_contender", args).await?;
    }
    call(s, "set_battle_status", json!({"battle_id": id, "status": "open"})).await?;
    let start = Instant::now();
    call(s, "set_battle_status", json!({"battle_id": id, "status": "executing"})).await?;
    loop {
        let b = call(s, "get_battle", json!({"battle_id": id})).await?;
        if b["status"] != "executing" {
            return Ok(start.elapsed());
        }
        if start.elapsed() > Duration::from_secs(60) {
            return Err(format!("battle {id} never left executing: {b}"));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// The servers' wiring over `db` (a runtime running), models on one
/// `[[models]]` endpoint `fake` at `models` (concurrency `concurrency`),
/// every toolset on: a new lenser's server, the lenser, and the runner
/// (kept while the benchmark runs).
pub(crate) fn wired(
    models: &FakeModels,
    db: &lf_server::Database,
    concurrency: u64,
) -> Result<(LfServer, LenserId, lf_server::Runner), String> {
    let raw = lf_model::RawEndpoint {
        name: Some("fake".into()),
        base_url: Some(models.base_url()),
        concurrency: Some(concurrency),
        ..Default::default()
    };
    let endpoint = lf_model::NamedEndpoint::parse(&raw, |_| None).map_err(|(f, m)| format!("{f}: {m}"))?;
    let endpoints = lf_model::Endpoints::new(Arc::new(lf_model::OfflineProvider), None)
        .with(vec![endpoint])
        .map_err(|e| e.message().to_owned())?;
    // Operator endpoints are the operator's: the egress guard checks
    // profiles' connections, not them.
    let runs = lf_server::RunSettings { models: Some(Arc::new(endpoints)), ..Default::default() };
    let (services, runner) = lf_server::services(
        db,
        Arc::new(lf_model::OfflineProvider),
        lf_server::Background::new(tokio::runtime::Handle::current()),
        lf_server::KeySealer::new(None),
        &runs,
    );
    let options = CatalogOptions {
        toolsets: Some(Group::parse_set(["all"]).map_err(|e| e.to_string())?),
        ..Default::default()
    };
    let lenser = LenserId::new();
    let me = Principal::Lenser { id: lenser, scopes: Scopes::READ_WRITE };
    Ok((LfServer::new(Arc::new(Catalog::new()), services, options, me), lenser, runner))
}
