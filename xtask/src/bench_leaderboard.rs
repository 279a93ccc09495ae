//! `bench-leaderboard`: the get_leaderboard tool end to end over SQLite, the
//! issue's case: 100,000 closed battles among 500 contenders, 200 bootstrap
//! rounds (the tool's default), this process pinned to one core.
//!
//! The battles are written straight into the SQLite tables in one
//! transaction (through the store, every battle would be several commits,
//! each one an fsync): exactly the `battles`, `battle_contenders` and
//! `battle_standings` rows the store writes for a closed `ai_vs_ai` battle
//! judged by `ai_judge` (no submissions or verdicts: closed_results reads
//! neither), then the `battle_results` rows as the migration that made that
//! table fills it. Before timing, the store reads one seeded battle back with
//! get_sheet, which must equal what was generated, and closed_results must
//! return every battle.
//!
//! Battles have 2 to 4 contenders drawn from 500 references whose true
//! ratings are spread over 1,000 Elo points (as in lf-battle's pure
//! `leaderboard` bench); the places follow the Plackett–Luce model (the
//! Bradley–Terry model for more than two), as judge scores rounded to whole
//! points, so equal scores make the occasional shared rank. A fixed seed:
//! every run measures the same data.
//!
//! Printed: the seeding time, then median and max over `--runs` (after one
//! warm-up) of the get_leaderboard call through the catalog (each on a fresh
//! server, which has no leaderboard kept), of the call again on one server
//! (the leaderboard it keeps until a battle closes), of the store's
//! closed_results alone (the load) and of the rating alone (the fit).

use std::sync::Arc;
use std::time::{Duration, Instant};

use lf_battle::rating::{LeaderboardOptions, SplitMix64, leaderboard};
use lf_battle::{
    Battle, BattleService, BattleStatus, BattleStore, BattleTitle, BattleType, Contender, ContenderType,
    DisplayName, JudgingMode, MaxContenders, Score, Slot, Standing, TaskPrompt,
};
use lf_core::{BattleId, ContenderId, ContenderRefId, LenserId, Principal, Reach, Timestamp};
use lf_lens::LensService;
use lf_tools::{Catalog, CatalogOptions, LfServer, Services};
use serde_json::{Value, json};
use sqlx::query_builder::Separated;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use crate::bench::{arg_usize, pin_this_process, workdir};

/// The seeded rows: battles, their contenders (in slot order, battle by
/// battle) and their standings (by position, battle by battle).
struct Seed {
    battles: Vec<Battle>,
    contenders: Vec<Contender>,
    standings: Vec<(BattleId, Standing)>,
}

/// 2026-01-01T00:00:00Z, in microseconds.
const START: i64 = 1_767_225_600_000_000;
const SECOND: i64 = 1_000_000;

fn generate(battles: usize, contenders: usize) -> Seed {
    let mut rng = SplitMix64::new(2026);
    let refs: Vec<ContenderRefId> = (0..contenders).map(|_| ContenderRefId::new()).collect();
    // Log-strengths: true ratings spread evenly over 1,000 Elo points.
    let theta: Vec<f64> = (0..contenders)
        .map(|i| std::f64::consts::LN_10 * 1000.0 * (i as f64 / contenders as f64 - 0.5) / 400.0)
        .collect();
    let creators: Vec<LenserId> = (0..100).map(|_| LenserId::new()).collect();
    let prompt =
        TaskPrompt::parse("Write a haiku about the tide, then explain its imagery in two sentences.")
            .expect("a task prompt");
    let mut seed = Seed {
        battles: Vec::with_capacity(battles),
        contenders: Vec::with_capacity(battles * 3),
        standings: Vec::with_capacity(battles * 3),
    };
    for t in 0..battles {
        let n = 2 + rng.below(3);
        let mut drawn: Vec<usize> = Vec::with_capacity(n);
        while drawn.len() < n {
            let i = rng.below(contenders);
            if !drawn.contains(&i) {
                drawn.push(i);
            }
        }
        let created = Timestamp::from_micros(START + t as i64 * 60 * SECOND);
        let closed = Timestamp::from_micros(created.as_micros() + 600 * SECOND);
        let id = BattleId::new();
        let entered: Vec<Contender> = drawn
            .iter()
            .enumerate()
            .map(|(slot, &i)| Contender {
                id: ContenderId::new(),
                battle_id: id,
                slot: Slot::from_index(slot).expect("a slot"),
                display_name: DisplayName::parse(format!("model {i}")).expect("a display name"),
                contender_type: ContenderType::AiModel,
                reference: refs[i],
                owner: None,
                agent: None,
                joined_at: Timestamp::from_micros(created.as_micros() + (slot as i64 + 1) * SECOND),
            })
            .collect();
        // Plackett–Luce: log-strength plus Gumbel noise, best first; the
        // judge's score in whole points (tenths, a multiple of 10).
        let scores: Vec<u16> = drawn
            .iter()
            .map(|&i| {
                let u = rng.unit().max(1e-12);
                let performance = theta[i] - (-u.ln()).ln();
                ((500.0 + 40.0 * performance) / 10.0).round().clamp(0.0, 100.0) as u16 * 10
            })
            .collect();
        // As scoring::standings orders a judged battle without votes and
        // with submissions all in at once: score, then slot.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| scores[b].cmp(&scores[a]).then(a.cmp(&b)));
        for (place, &k) in order.iter().enumerate() {
            let rank = 1 + scores.iter().filter(|s| **s > scores[k]).count();
            seed.standings.push((
                id,
                Standing {
                    contender_id: entered[k].id,
                    position: place as u8 + 1,
                    rank: rank as u8,
                    score: Some(Score::from_tenths(scores[k])),
                    votes: 0,
                },
            ));
        }
        seed.battles.push(Battle {
            id,
            title: BattleTitle::parse(format!("Haiku duel {t}")).expect("a title"),
            task_prompt: prompt.clone(),
            battle_type: BattleType::AiVsAi,
            judging_mode: JudgingMode::AiJudge,
            max_contenders: MaxContenders::parse(n as i64).expect("2 to 4 contenders"),
            ai_judge_model_key: None,
            rubric: None,
            auto_check: None,
            tags: Vec::new(),
            creator: creators[rng.below(creators.len())],
            agent: None,
            status: BattleStatus::Closed,
            winner: Some(entered[order[0]].id),
            created_at: created,
            updated_at: closed,
            closed_at: Some(closed),
        });
        seed.contenders.extend(entered);
    }
    seed
}

/// Inserts `rows` with multi-row `INSERT … VALUES`, `per_statement` rows a
/// statement (under SQLite's 32,766 parameters).
async fn insert_rows<T>(
    conn: &mut SqliteConnection,
    head: &str,
    rows: &[T],
    per_statement: usize,
    mut bind: impl FnMut(&mut Separated<'_, Sqlite, &'static str>, &T),
) -> Result<(), String> {
    for chunk in rows.chunks(per_statement) {
        let mut qb = QueryBuilder::<Sqlite>::new(head);
        qb.push(" ");
        qb.push_values(chunk, |mut b, row| bind(&mut b, row));
        qb.build().execute(&mut *conn).await.map_err(|e| format!("{head}: {e}"))?;
    }
    Ok(())
}

/// Writes `seed` into the battle tables in one transaction, on a
/// connection of its own. The battles name their winners before the
/// contenders exist, so foreign keys are checked at commit.
async fn write(pool: &sqlx::SqlitePool, seed: &Seed) -> Result<(), String> {
    let mut tx = pool.begin().await.map_err(|e| e.to_string())?;
    sqlx::query("PRAGMA defer_foreign_keys = ON").execute(&mut *tx).await.map_err(|e| e.to_string())?;
    insert_rows(
        &mut tx,
        "INSERT INTO battles (id, title, task_prompt, battle_type, judging_mode, max_contenders, \
         ai_judge_model_key, rubric, auto_check, creator_id, status, winner_id, created_at, updated_at, closed_at, \
         agent_id)",
        &seed.battles,
        1_000,
        |q, b| {
            q.push_bind(b.id.as_uuid())
                .push_bind(b.title.as_str().to_owned())
                .push_bind(b.task_prompt.as_str().to_owned())
                .push_bind(b.battle_type.as_str())
                .push_bind(b.judging_mode.as_str())
                .push_bind(b.max_contenders.get() as i64)
                .push_bind(None::<String>)
                .push_bind(None::<String>)
                .push_bind(None::<String>)
                .push_bind(b.creator.as_uuid())
                .push_bind(b.status.as_str())
                .push_bind(b.winner.map(|w| w.as_uuid()))
                .push_bind(b.created_at.as_micros())
                .push_bind(b.updated_at.as_micros())
                .push_bind(b.closed_at.map(|t| t.as_micros()))
                .push_bind(b.agent.map(|a| a.as_uuid()));
        },
    )
    .await?;
    insert_rows(
        &mut tx,
        "INSERT INTO battle_contenders \
         (id, battle_id, slot, display_name, contender_type, reference_id, owner_id, joined_at, agent_id)",
        &seed.contenders,
        2_000,
        |q, c| {
            q.push_bind(c.id.as_uuid())
                .push_bind(c.battle_id.as_uuid())
                .push_bind(c.slot.index() as i64)
                .push_bind(c.display_name.as_str().to_owned())
                .push_bind(c.contender_type.as_str())
                .push_bind(c.reference.as_uuid())
                .push_bind(c.owner.map(|o| o.as_uuid()))
                .push_bind(c.joined_at.as_micros())
                .push_bind(c.agent.map(|a| a.as_uuid()));
        },
    )
    .await?;
    insert_rows(
        &mut tx,
        "INSERT INTO battle_standings (battle_id, contender_id, position, rank, score, votes)",
        &seed.standings,
        2_500,
        |q, (battle, s)| {
            q.push_bind(battle.as_uuid())
                .push_bind(s.contender_id.as_uuid())
                .push_bind(i64::from(s.position))
                .push_bind(i64::from(s.rank))
                .push_bind(s.score.map(|x| i64::from(x.tenths())))
                .push_bind(i64::from(s.votes));
        },
    )
    .await?;
    // get_leaderboard's table, filled as the migration that created it
    // fills it for battles closed before it (the same rows the store
    // writes when a battle closes; lf-store's tests hold the two equal).
    let migration = include_str!("../../crates/lf-store/migrations/sqlite/0004_battle_results.sql");
    let backfill = migration
        .find("INSERT INTO battle_results ")
        .map(|at| &migration[at..])
        .and_then(|from| from.find(';').map(|end| &from[..=end]))
        .ok_or("0004_battle_results.sql has no INSERT INTO battle_results")?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(backfill))
        .execute(&mut *tx)
        .await
        .map_err(|e| format!("filling battle_results: {e}"))?;
    tx.commit().await.map_err(|e| format!("committing the seed: {e}"))
}

/// The store reads battle `k` back exactly as generated, and closed_results
/// sees every battle and every contender.
async fn verify(store: &Arc<dyn BattleStore>, seed: &Seed, k: usize) -> Result<(), String> {
    let battle = &seed.battles[k];
    let sheet = store.get_sheet(Reach::Everything, battle.id).await.map_err(|e| e.to_string())?;
    let contenders: Vec<Contender> =
        seed.contenders.iter().filter(|c| c.battle_id == battle.id).cloned().collect();
    let standings: Vec<Standing> =
        seed.standings.iter().filter(|(b, _)| *b == battle.id).map(|(_, s)| *s).collect();
    if sheet.battle != *battle || sheet.contenders != contenders || sheet.standings != standings {
        return Err(format!(
            "battle {k} reads back differently:\n  wrote {battle:?}\n  {contenders:?}\n  {standings:?}\n  read {sheet:?}"
        ));
    }
    if !(sheet.submissions.is_empty() && sheet.verdicts.is_empty() && sheet.judge_errors.is_empty()) {
        return Err(format!("battle {k} has rows nobody seeded"));
    }
    let results = store.closed_results(None).await.map_err(|e| e.to_string())?;
    let entries: usize = results.iter().map(|r| r.entries.len()).sum();
    if results.len() != seed.battles.len() || entries != seed.contenders.len() {
        return Err(format!(
            "closed_results returned {} battles and {entries} entries, not {} and {}",
            results.len(),
            seed.battles.len(),
            seed.contenders.len()
        ));
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `median … max …` of `times` (sorted here).
fn summary(times: &mut [Duration]) -> String {
    times.sort();
    format!(
        "median {:>8.1} ms  max {:>8.1} ms  (runs: {})",
        ms(times[times.len() / 2]),
        ms(*times.last().unwrap()),
        times.iter().map(|t| format!("{:.1}", ms(*t))).collect::<Vec<_>>().join(", ")
    )
}

/// Runs `f` once to warm up, then `runs` times timed.
async fn time_runs<R>(
    runs: usize,
    mut f: impl AsyncFnMut() -> Result<R, String>,
) -> Result<Vec<Duration>, String> {
    f().await?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        std::hint::black_box(f().await?);
        times.push(started.elapsed());
    }
    Ok(times)
}

/// Checks a get_leaderboard answer (its structured content; `None` or an
/// error flag: the call failed) against the seed.
fn check(
    content: Option<&Value>,
    is_error: Option<bool>,
    battles: usize,
    contenders: usize,
) -> Result<(), String> {
    let v = match content {
        Some(v) if is_error != Some(true) => v,
        _ => return Err(format!("get_leaderboard failed: {content:?}")),
    };
    let expect = |key: &str, want: usize| -> Result<(), String> {
        match v[key].as_u64() {
            Some(got) if got == want as u64 => Ok(()),
            _ => Err(format!("get_leaderboard: {key} is {}, expected {want}", v[key])),
        }
    };
    expect("battles_counted", battles)?;
    expect("contenders_fitted", contenders)?;
    expect("bootstrap_rounds", LeaderboardOptions::DEFAULT_ROUNDS as usize)?;
    if v["items"].as_array().is_none_or(Vec::is_empty) {
        return Err(format!("get_leaderboard listed no ratings: {v}"));
    }
    Ok(())
}

pub fn run(args: &[String]) -> Result<(), String> {
    let battles = arg_usize(args, "--battles", 100_000);
    let contenders = arg_usize(args, "--contenders", 500);
    let runs = arg_usize(args, "--runs", 5).max(1);
    let keep = args.iter().any(|a| a == "--keep");
    if contenders < 4 || battles == 0 {
        return Err("--contenders must be at least 4 and --battles at least 1".into());
    }
    // Before the runtime starts, so its threads (and sqlx's) are on core 0 too.
    pin_this_process(0);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let dir = workdir("bench-leaderboard");
        let url = format!("sqlite://{}", dir.join("bench.db").display());
        let db = lf_store::Database::connect(&url).await.map_err(|e| e.to_string())?;
        let pool = db.sqlite_pool().ok_or("not a SQLite database")?;

        eprintln!("seeding {battles} closed battles among {contenders} contenders into {url}");
        let started = Instant::now();
        let seed = generate(battles, contenders);
        let generated = started.elapsed();
        write(pool, &seed).await?;
        let seeded = started.elapsed();
        let store = db.battle_store();
        verify(&store, &seed, battles / 2).await?;
        let size = std::fs::metadata(dir.join("bench.db")).map(|m| m.len()).unwrap_or(0);

        // A fresh server for each call, as the battle service keeps the
        // leaderboard it computed until the results change: the first call
        // after a battle closes is the one that rates.
        let fresh_server = || {
            let services =
                Services::builder()
                    .lens(LensService::new(db.lens_store()))
                    .battle(BattleService::new(store.clone()))
                    .workflow(crate::bench_workflow::memory_service())
                    .connections(crate::bench_workflow::no_connections())
                    .build();
            LfServer::new(
                Arc::new(Catalog::new()),
                Arc::new(services),
                CatalogOptions::default(),
                Principal::Service { acting_as: None },
            )
        };
        let arguments = json!({}).as_object().cloned().unwrap_or_default();
        let call = async |server: &LfServer| -> Result<(), String> {
            let result = server.call("get_leaderboard", arguments.clone()).await.map_err(|e| e.to_string())?;
            check(result.structured_content.as_ref(), result.is_error, battles, contenders)
        };
        let mut total = time_runs(runs, async || call(&fresh_server()).await).await?;
        let server = fresh_server();
        let mut kept = time_runs(runs, async || call(&server).await).await?;
        let mut load =
            time_runs(runs, async || store.closed_results(None).await.map_err(|e| e.to_string())).await?;
        let results = store.closed_results(None).await.map_err(|e| e.to_string())?;
        let mut fit = time_runs(runs, async || Ok(leaderboard(&results, LeaderboardOptions::default()))).await?;

        let entries = seed.contenders.len();
        println!(
            "get_leaderboard over {battles} closed battles ({entries} entries) among {contenders} contenders on SQLite, \
             {} bootstrap rounds, one core, {runs} runs after a warm-up:",
            LeaderboardOptions::DEFAULT_ROUNDS
        );
        println!(
            "  seeding          {:>8.2} s (generating {:.2} s, one transaction {:.2} s; database {:.0} MB)",
            seeded.as_secs_f64(),
            generated.as_secs_f64(),
            (seeded - generated).as_secs_f64(),
            size as f64 / 1e6
        );
        println!("  get_leaderboard            {}", summary(&mut total));
        println!("  again, kept until a battle closes: {}", summary(&mut kept));
        println!("  load (closed_results)      {}", summary(&mut load));
        println!("  fit (rating::leaderboard)  {}", summary(&mut fit));
        // From the fastest runs: the least disturbed by anything else on the core.
        let rest = ms(total[0]) - ms(load[0]) - ms(fit[0]);
        println!("  rest of the call (fastest total - fastest load - fastest fit): {rest:.1} ms");
        db.close().await;
        if keep {
            eprintln!("kept {}", dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&dir);
        }
        Ok(())
    })
}
