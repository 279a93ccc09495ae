//! The statements of [`lf_eval::experiment::ExperimentStore`], the same on
//! both backends, and the binding and decoding of their rows.

use lf_battle::{Claim, ContenderRef, ContenderType, decide_lease};
use lf_core::{ContenderRefId, LenserId, LfError, LfResult, Page, PageRequest, Reach, Timestamp};
use lf_eval::dataset::{DatasetId, JsonObject, Visibility};
use lf_eval::experiment::{
    AssertionOutcome, CellKey, CellResult, Contender, Experiment, ExperimentId, ExperimentStatus, Judged,
    Matchup, Outcome, Rated, RatedMatchup, ResultFilter, Tally, rank_of,
};
use serde_json::{Value, json};
use sqlx::QueryBuilder;

use crate::dialect::{Bind, Columns, Conn, Dialect, execute, query, row_of, rows_of};
use crate::error::conflict_or;
use crate::page::listing;
use crate::reach::BindReach;
use crate::workflow::rows::valid;

const INSERT: &str = "INSERT INTO experiments (id, owner_id, visibility, dataset_id, dataset_version, \
     case_count, contenders, assertions, repeats, concurrency, budget_credits, status, created_at, updated_at, \
     created_by, agent_id, judge) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)";
/// An experiment's columns, read by [`experiment`].
macro_rules! columns {
    () => {
        "SELECT e.id, e.owner_id, e.visibility, e.dataset_id, e.dataset_version, e.case_count, \
         e.contenders, e.assertions, e.repeats, e.concurrency, e.budget_credits, e.status, e.created_at, \
         e.updated_at, e.created_by, e.agent_id, e.judge"
    };
}
const BY_ID: &str = concat!(
    columns!(),
    " FROM experiments e WHERE e.id = $1 AND ($2 OR e.owner_id = $3 OR e.visibility <> 'private')"
);
const RUNNING: &str =
    concat!(columns!(), " FROM experiments e WHERE e.status = 'running' ORDER BY e.created_at, e.id");
const FINISH: &str =
    "UPDATE experiments SET status = $2, updated_at = $3 WHERE id = $1 AND status = 'running'";

const READ_CELL: &str = "SELECT attempts, holder, lease_until FROM experiment_cells \
     WHERE experiment_id = $1 AND position = $2 AND contender = $3 AND rep = $4";
const HAS_RESULT: &str = "SELECT count(*) FROM experiment_results \
     WHERE experiment_id = $1 AND position = $2 AND contender = $3 AND rep = $4";
const INSERT_CELL: &str = "INSERT INTO experiment_cells (experiment_id, position, contender, rep, attempts, \
     holder, lease_until) VALUES ($1, $2, $3, $4, 1, $5, $6) \
     ON CONFLICT (experiment_id, position, contender, rep) DO NOTHING";
const TAKE_CELL: &str = "UPDATE experiment_cells SET attempts = $5, holder = $6, lease_until = $7 \
     WHERE experiment_id = $1 AND position = $2 AND contender = $3 AND rep = $4 AND attempts = $8 AND holder = $9";
const RENEW_CELL: &str = "UPDATE experiment_cells SET lease_until = $6 \
     WHERE experiment_id = $1 AND position = $2 AND contender = $3 AND rep = $4 AND holder = $5";
/// Inserted only while `$18` holds the cell's lease or it has expired (at
/// `$19`), and once.
const SAVE: &str = "INSERT INTO experiment_results (experiment_id, position, contender, rep, tags, answer, \
     outcomes, passed, score, error, input_tokens, output_tokens, cost_usd, credits, latency_ms, attempts, \
     created_at, judge_cost_usd) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, \
     $17, $20 \
     WHERE EXISTS (SELECT 1 FROM experiment_cells c WHERE c.experiment_id = $1 AND c.position = $2 \
     AND c.contender = $3 AND c.rep = $4 AND (c.holder = $18 OR c.lease_until < $19)) \
     ON CONFLICT (experiment_id, position, contender, rep) DO NOTHING";
const DONE: &str = "SELECT position, contender, rep FROM experiment_results \
     WHERE experiment_id = $1 AND position >= $2 AND position <= $3 ORDER BY position, contender, rep";
const TALLIES: &str = "SELECT contender, count(*) AS cells, \
     CAST(sum(CASE WHEN passed THEN 1 ELSE 0 END) AS bigint) AS passed, \
     CAST(sum(CASE WHEN error IS NULL THEN 0 ELSE 1 END) AS bigint) AS errors, \
     sum(score) AS score_sum, CAST(sum(input_tokens) AS bigint) AS input_tokens, \
     CAST(sum(output_tokens) AS bigint) AS output_tokens, sum(cost_usd + judge_cost_usd) AS cost_usd, \
     CAST(sum(credits) AS bigint) AS credits FROM experiment_results WHERE experiment_id = $1 \
     GROUP BY contender ORDER BY contender";
/// The `$3`-th (from 0) latency of a contender's answered cells, from the
/// partial index `experiment_results_latency`.
const LATENCY: &str = "SELECT latency_ms FROM experiment_results \
     WHERE experiment_id = $1 AND contender = $2 AND error IS NULL ORDER BY latency_ms LIMIT 1 OFFSET $3";
/// One contender's outcomes, from the index `experiment_results_by_contender`.
const OUTCOMES: &str = "SELECT position, rep, passed, score FROM experiment_results \
     WHERE experiment_id = $1 AND contender = $2 AND position <= $3 ORDER BY position, rep";
const INSERT_MATCHUP: &str = "INSERT INTO experiment_matchups (id, experiment_id, position, contender, rep, \
     contender_type, contender_ref, contender_name, baseline_type, baseline_ref, baseline_name, score) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
const BUMP_MATCHUPS: &str = "UPDATE experiment_matchups_version SET version = version + 1 WHERE id = 1";
const MATCHUPS_VERSION: &str = "SELECT version FROM experiment_matchups_version WHERE id = 1";
/// The matchups of experiments everyone may read, with their cells' tags.
const MATCHUPS: &str = "SELECT m.id, m.contender_type, m.contender_ref, m.contender_name, m.baseline_type, \
     m.baseline_ref, m.baseline_name, m.score, r.tags, r.created_at FROM experiment_matchups m \
     JOIN experiments e ON e.id = m.experiment_id \
     JOIN experiment_results r ON r.experiment_id = m.experiment_id AND r.position = m.position \
     AND r.contender = m.contender AND r.rep = m.rep WHERE e.visibility <> 'private'";
const RESULT_COLUMNS: &str = "SELECT r.experiment_id, r.position, r.contender, r.rep, r.tags, r.answer, \
     r.outcomes, r.passed, r.score, r.error, r.input_tokens, r.output_tokens, r.cost_usd, r.credits, \
     r.latency_ms, r.attempts, r.created_at";

fn small<T: TryFrom<i64>>(n: i64, column: &str) -> LfResult<T> {
    valid(T::try_from(n).map_err(|_| format!("{n} is out of range")), column)
}

fn unsigned(n: i64, column: &str) -> LfResult<u64> {
    small(n, column)
}

fn json_text(text: &str, column: &str) -> LfResult<Value> {
    valid(serde_json::from_str(text), column)
}

fn experiment(row: &impl Columns) -> LfResult<Experiment> {
    let contenders = match json_text(row.text("contenders")?, "experiments.contenders")? {
        Value::Array(items) => items
            .into_iter()
            .map(|v| valid(Contender::from_json(&v), "experiments.contenders"))
            .collect::<LfResult<Vec<_>>>()?,
        _ => return valid(Err("not a list"), "experiments.contenders"),
    };
    let assertions = match json_text(row.text("assertions")?, "experiments.assertions")? {
        Value::Array(items) => items
            .into_iter()
            .map(|v| match v {
                Value::Object(o) => Ok(o),
                _ => valid(Err("not an object"), "experiments.assertions"),
            })
            .collect::<LfResult<Vec<JsonObject>>>()?,
        _ => return valid(Err("not a list"), "experiments.assertions"),
    };
    Ok(Experiment {
        id: ExperimentId::from_uuid(row.value("id")?),
        owner: LenserId::from_uuid(row.value("owner_id")?),
        visibility: valid(Visibility::parse(row.text("visibility")?), "experiments.visibility")?,
        dataset: DatasetId::from_uuid(row.value("dataset_id")?),
        dataset_version: small(row.value("dataset_version")?, "experiments.dataset_version")?,
        case_count: small(row.value("case_count")?, "experiments.case_count")?,
        contenders,
        assertions,
        repeats: small(row.value("repeats")?, "experiments.repeats")?,
        concurrency: small(row.value("concurrency")?, "experiments.concurrency")?,
        budget_credits: row
            .value::<Option<i64>>("budget_credits")?
            .map(|n| unsigned(n, "experiments.budget_credits"))
            .transpose()?,
        status: valid(ExperimentStatus::parse(row.text("status")?), "experiments.status")?,
        created_at: row.time("created_at")?,
        updated_at: row.time("updated_at")?,
        created_by: LenserId::from_uuid(row.value("created_by")?),
        agent: row.value::<Option<uuid::Uuid>>("agent_id")?.map(LenserId::from_uuid),
        judge: row.value("judge")?,
    })
}

/// A graded outcome's judgement, as [`outcome_json`] writes it.
fn judged(j: &Value) -> LfResult<Judged> {
    let column = "experiment_results.outcomes";
    let n = |k: &str| j.get(k).and_then(Value::as_u64);
    match (j.get("score").and_then(Value::as_f64), j.get("model").and_then(Value::as_str)) {
        (Some(score), Some(model)) => Ok(Judged {
            score,
            position_consistent: j.get("position_consistent").and_then(Value::as_bool),
            model: model.to_owned(),
            input_tokens: valid(n("input_tokens").ok_or("no input_tokens"), column)?,
            output_tokens: valid(n("output_tokens").ok_or("no output_tokens"), column)?,
            cost_usd: valid(j.get("cost_usd").and_then(Value::as_f64).ok_or("no cost_usd"), column)?,
        }),
        _ => valid(Err("not a judgement"), column),
    }
}

/// An outcome as the `outcomes` column keeps it.
fn outcome_json(o: &AssertionOutcome) -> Value {
    let mut v = json!({"kind": o.kind, "from": o.from, "passed": o.passed, "reason": o.reason});
    if let Some(j) = &o.judged {
        v["judged"] = json!({
            "score": j.score, "position_consistent": j.position_consistent, "model": j.model,
            "input_tokens": j.input_tokens, "output_tokens": j.output_tokens, "cost_usd": j.cost_usd,
        });
    }
    v
}

fn result(row: &impl Columns) -> LfResult<CellResult> {
    let tags = match json_text(row.text("tags")?, "experiment_results.tags")? {
        Value::Array(items) => items
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Ok(s),
                _ => valid(Err("not text"), "experiment_results.tags"),
            })
            .collect::<LfResult<Vec<_>>>()?,
        _ => return valid(Err("not a list"), "experiment_results.tags"),
    };
    let outcomes = match json_text(row.text("outcomes")?, "experiment_results.outcomes")? {
        Value::Array(items) => items
            .iter()
            .map(|v| {
                let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
                let judged = match v.get("judged") {
                    None | Some(Value::Null) => None,
                    Some(j) => Some(judged(j)?),
                };
                match (text("kind"), text("from"), v.get("passed").and_then(Value::as_bool), text("reason")) {
                    (Some(kind), Some(from), Some(passed), Some(reason)) => {
                        Ok(AssertionOutcome { kind, from, passed, reason, judged })
                    }
                    _ => valid(Err("not an outcome"), "experiment_results.outcomes"),
                }
            })
            .collect::<LfResult<Vec<_>>>()?,
        _ => return valid(Err("not a list"), "experiment_results.outcomes"),
    };
    Ok(CellResult {
        key: CellKey {
            experiment: ExperimentId::from_uuid(row.value("experiment_id")?),
            position: small(row.value("position")?, "experiment_results.position")?,
            contender: small(row.value("contender")?, "experiment_results.contender")?,
            repeat: small(row.value("rep")?, "experiment_results.rep")?,
        },
        tags,
        answer: row.value("answer")?,
        outcomes,
        passed: row.value("passed")?,
        score: row.value("score")?,
        error: row.value("error")?,
        input_tokens: unsigned(row.value("input_tokens")?, "experiment_results.input_tokens")?,
        output_tokens: unsigned(row.value("output_tokens")?, "experiment_results.output_tokens")?,
        cost_usd: row.value("cost_usd")?,
        credits: unsigned(row.value("credits")?, "experiment_results.credits")?,
        latency_ms: unsigned(row.value("latency_ms")?, "experiment_results.latency_ms")?,
        attempts: small(row.value("attempts")?, "experiment_results.attempts")?,
        created_at: row.time("created_at")?,
        matchups: Vec::new(),
    })
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(crate) async fn add<C: Conn>(conn: &mut C, e: &Experiment) -> LfResult<()> {
    let contenders: Vec<Value> = e.contenders.iter().map(Contender::to_json).collect();
    let assertions: Vec<Value> = e.assertions.iter().cloned().map(Value::Object).collect();
    let q = query::<C::Database>(INSERT)
        .put(e.id.as_uuid())
        .put(e.owner.as_uuid())
        .put(e.visibility.as_str().to_owned())
        .put(e.dataset.as_uuid())
        .put(i64::from(e.dataset_version))
        .put(i64::from(e.case_count))
        .put(json!(contenders).to_string())
        .put(Value::Array(assertions).to_string())
        .put(i64::from(e.repeats))
        .put(i64::from(e.concurrency))
        .put(e.budget_credits.map(int))
        .put(e.status.as_str().to_owned())
        .put_time(e.created_at)
        .put_time(e.updated_at)
        .put(e.created_by.as_uuid())
        .put(e.agent.map(|a| a.as_uuid()))
        .put(e.judge.clone());
    q.execute(conn.exec())
        .await
        .map_err(conflict_or(|| LfError::conflict("an experiment of this id exists")))?;
    Ok(())
}

pub(crate) async fn by_id<C: Conn>(
    conn: &mut C,
    reach: Reach,
    id: ExperimentId,
) -> LfResult<Option<Experiment>> {
    row_of(conn, query(BY_ID).put(id.as_uuid()).put_everything_or_me(reach), experiment).await
}

/// The experiments on `dataset` that `reach` reads, newest first, from the
/// index `experiments_by_dataset`.
pub(crate) async fn of_dataset<C: Conn>(
    conn: &mut C,
    reach: Reach,
    dataset: DatasetId,
    page: PageRequest,
) -> LfResult<Page<Experiment>> {
    let from = |qb: &mut QueryBuilder<C::Database>| {
        C::Database::push_bind(qb.push(" FROM experiments e WHERE e.dataset_id = "), dataset.as_uuid());
        crate::reach::push_owned_or_shared(qb.push(" AND "), "e", reach);
    };
    listing(conn, columns!(), from, " ORDER BY e.created_at DESC, e.id DESC", page, experiment).await
}

pub(crate) async fn running<C: Conn>(conn: &mut C) -> LfResult<Vec<Experiment>> {
    rows_of(conn, query(RUNNING), experiment).await
}

pub(crate) async fn finish<C: Conn>(
    conn: &mut C,
    id: ExperimentId,
    to: ExperimentStatus,
    at: Timestamp,
) -> LfResult<bool> {
    let q = query::<C::Database>(FINISH).put(id.as_uuid()).put(to.as_str().to_owned()).put_time(at);
    Ok(execute(conn, q).await? == 1)
}

fn cell<DB: Dialect>(sql: &'static str, k: CellKey) -> crate::dialect::Query<DB> {
    query::<DB>(sql)
        .put(k.experiment.as_uuid())
        .put(i64::from(k.position))
        .put(i64::from(k.contender))
        .put(i64::from(k.repeat))
}

async fn lease<C: Conn>(conn: &mut C, k: CellKey) -> LfResult<Option<(u32, String, Timestamp)>> {
    row_of(conn, cell(READ_CELL, k), |row| {
        Ok((
            u32::try_from(row.value::<i64>("attempts")?).unwrap_or(u32::MAX),
            row.text("holder")?.to_owned(),
            row.time("lease_until")?,
        ))
    })
    .await
}

pub(crate) async fn claim<C: Conn>(
    conn: &mut C,
    k: CellKey,
    holder: &str,
    now: Timestamp,
    until: Timestamp,
    budget: u32,
) -> LfResult<Claim> {
    let found = lease(conn, k).await?;
    let has_result = row_of(conn, cell(HAS_RESULT, k), |r| r.value::<i64>(0)).await?.unwrap_or(0) > 0;
    if has_result {
        return Ok(Claim::Spent { attempts: found.map_or(0, |l| l.0) });
    }
    let lost = async |conn: &mut C| -> LfResult<Claim> {
        Ok(match lease(conn, k).await? {
            Some(l) => decide_lease((l.0, &l.1, l.2), holder, now, budget)
                .err()
                .unwrap_or(Claim::Leased { until: l.2 }),
            None => Claim::Leased { until: now },
        })
    };
    let Some((attempts, held_by, lease_until)) = found else {
        if budget == 0 {
            return Ok(Claim::Spent { attempts: 0 });
        }
        let q = cell(INSERT_CELL, k).put(holder.to_owned()).put_time(until);
        return match execute(conn, q).await? {
            1 => Ok(Claim::Attempt(1)),
            _ => lost(conn).await,
        };
    };
    let n = match decide_lease((attempts, &held_by, lease_until), holder, now, budget) {
        Ok(n) => n,
        Err(refused) => return Ok(refused),
    };
    let q = cell(TAKE_CELL, k)
        .put(i64::from(n))
        .put(holder.to_owned())
        .put_time(until)
        .put(i64::from(attempts))
        .put(held_by);
    match execute(conn, q).await? {
        1 => Ok(Claim::Attempt(n)),
        _ => lost(conn).await,
    }
}

pub(crate) async fn renew<C: Conn>(
    conn: &mut C,
    k: CellKey,
    holder: &str,
    until: Timestamp,
) -> LfResult<bool> {
    Ok(execute(conn, cell(RENEW_CELL, k).put(holder.to_owned()).put_time(until)).await? == 1)
}

pub(crate) async fn save<C: Conn>(
    conn: &mut C,
    r: &CellResult,
    holder: &str,
    now: Timestamp,
) -> LfResult<bool> {
    let outcomes: Vec<Value> = r.outcomes.iter().map(outcome_json).collect();
    let q = cell(SAVE, r.key)
        .put(json!(r.tags).to_string())
        .put(r.answer.clone())
        .put(Value::Array(outcomes).to_string())
        .put(r.passed)
        .put(r.score)
        .put(r.error.clone())
        .put(int(r.input_tokens))
        .put(int(r.output_tokens))
        .put(r.cost_usd)
        .put(int(r.credits))
        .put(int(r.latency_ms))
        .put(i64::from(r.attempts))
        .put_time(r.created_at)
        .put(holder.to_owned())
        .put_time(now)
        .put(r.judge_cost_usd());
    if execute(conn, q).await? != 1 {
        return Ok(false);
    }
    for m in &r.matchups {
        let q = query::<C::Database>(INSERT_MATCHUP)
            .put(m.id.as_uuid())
            .put(r.key.experiment.as_uuid())
            .put(i64::from(r.key.position))
            .put(i64::from(r.key.contender))
            .put(i64::from(r.key.repeat))
            .put(m.contender.reference.kind.as_str().to_owned())
            .put(m.contender.reference.id.as_uuid())
            .put(m.contender.name.clone())
            .put(m.baseline.reference.kind.as_str().to_owned())
            .put(m.baseline.reference.id.as_uuid())
            .put(m.baseline.name.clone())
            .put(m.score);
        execute(conn, q).await?;
    }
    if !r.matchups.is_empty() {
        execute(conn, query::<C::Database>(BUMP_MATCHUPS)).await?;
    }
    Ok(true)
}

pub(crate) async fn matchups_version<C: Conn>(conn: &mut C) -> LfResult<i64> {
    Ok(row_of(conn, query(MATCHUPS_VERSION), |r| r.value::<i64>("version")).await?.unwrap_or(0))
}

pub(crate) async fn matchups<C: Conn>(conn: &mut C) -> LfResult<Vec<RatedMatchup>> {
    let column = "experiment_matchups";
    rows_of(conn, query(MATCHUPS), |row| {
        let rated = |kind: &str, id: &str, name: &str| -> LfResult<Rated> {
            Ok(Rated {
                reference: ContenderRef {
                    kind: valid(ContenderType::parse(row.text(kind)?), column)?,
                    id: ContenderRefId::from_uuid(row.value(id)?),
                },
                name: row.text(name)?.to_owned(),
            })
        };
        let tags = match json_text(row.text("tags")?, "experiment_results.tags")? {
            Value::Array(items) => items.into_iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
            _ => return valid(Err("not a list"), "experiment_results.tags"),
        };
        Ok(RatedMatchup {
            matchup: Matchup {
                id: lf_core::BattleId::from_uuid(row.value("id")?),
                contender: rated("contender_type", "contender_ref", "contender_name")?,
                baseline: rated("baseline_type", "baseline_ref", "baseline_name")?,
                score: row.value("score")?,
            },
            tags,
            at: row.time("created_at")?,
        })
    })
    .await
}

pub(crate) async fn done<C: Conn>(
    conn: &mut C,
    id: ExperimentId,
    first: u32,
    last: u32,
) -> LfResult<Vec<CellKey>> {
    let q = query(DONE).put(id.as_uuid()).put(i64::from(first)).put(i64::from(last));
    rows_of(conn, q, |row| {
        Ok(CellKey {
            experiment: id,
            position: small(row.value("position")?, "experiment_results.position")?,
            contender: small(row.value("contender")?, "experiment_results.contender")?,
            repeat: small(row.value("rep")?, "experiment_results.rep")?,
        })
    })
    .await
}

pub(crate) async fn tallies<C: Conn>(conn: &mut C, id: ExperimentId) -> LfResult<Vec<Tally>> {
    let mut all = rows_of(conn, query(TALLIES).put(id.as_uuid()), |row| {
        Ok(Tally {
            contender: small(row.value("contender")?, "experiment_results.contender")?,
            cells: unsigned(row.value("cells")?, "cells")?,
            passed: unsigned(row.value("passed")?, "passed")?,
            errors: unsigned(row.value("errors")?, "errors")?,
            score_sum: row.value("score_sum")?,
            input_tokens: unsigned(row.value("input_tokens")?, "input_tokens")?,
            output_tokens: unsigned(row.value("output_tokens")?, "output_tokens")?,
            cost_usd: row.value("cost_usd")?,
            credits: unsigned(row.value("credits")?, "credits")?,
            latency_p50_ms: None,
            latency_p95_ms: None,
        })
    })
    .await?;
    for t in &mut all {
        let answered = t.cells - t.errors;
        let at = async |p: u32, conn: &mut C| -> LfResult<Option<u64>> {
            let Some(rank) = rank_of(p, answered) else { return Ok(None) };
            let q = query(LATENCY).put(id.as_uuid()).put(i64::from(t.contender)).put(int(rank));
            row_of(conn, q, |r| unsigned(r.value(0)?, "experiment_results.latency_ms")).await
        };
        let p50 = at(50, conn).await?;
        let p95 = at(95, conn).await?;
        t.latency_p50_ms = p50;
        t.latency_p95_ms = p95;
    }
    Ok(all)
}

pub(crate) async fn outcomes<C: Conn>(
    conn: &mut C,
    id: ExperimentId,
    contender: u16,
    last: u32,
) -> LfResult<Vec<Outcome>> {
    let q = query(OUTCOMES).put(id.as_uuid()).put(i64::from(contender)).put(i64::from(last));
    rows_of(conn, q, |row| {
        Ok(Outcome {
            position: small(row.value("position")?, "experiment_results.position")?,
            repeat: small(row.value("rep")?, "experiment_results.rep")?,
            passed: row.value("passed")?,
            score: row.value("score")?,
        })
    })
    .await
}

/// `%"tag"%` with LIKE's wildcards escaped: the tag whole, as JSON writes it.
fn tag_pattern(tag: &str) -> String {
    let quoted = Value::String(tag.to_owned()).to_string();
    let escaped = quoted.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

pub(crate) async fn results<C: Conn>(
    conn: &mut C,
    id: ExperimentId,
    filter: &ResultFilter,
    page: PageRequest,
) -> LfResult<Page<CellResult>> {
    let from = |qb: &mut QueryBuilder<C::Database>| {
        C::Database::push_bind(qb.push(" FROM experiment_results r WHERE r.experiment_id = "), id.as_uuid());
        if let Some(c) = filter.contender {
            C::Database::push_bind(qb.push(" AND r.contender = "), i64::from(c));
        }
        if let Some(p) = filter.passed {
            C::Database::push_bind(qb.push(" AND r.passed = "), p);
        }
        if let Some(t) = &filter.tag {
            C::Database::push_bind(qb.push(" AND r.tags LIKE "), tag_pattern(t)).push(" ESCAPE '\\'");
        }
        if let Some((first, last)) = filter.positions {
            C::Database::push_bind(qb.push(" AND r.position BETWEEN "), i64::from(first));
            C::Database::push_bind(qb.push(" AND "), i64::from(last));
        }
    };
    listing(conn, RESULT_COLUMNS, from, " ORDER BY r.position, r.contender, r.rep", page, result).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn tags_are_matched_whole_with_wildcards_escaped() {
        assert_eq!(super::tag_pattern("a_b%"), "%\"a\\_b\\%\"%");
    }
}
