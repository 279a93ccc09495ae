//! The statements of team runs and their events, the same on both
//! backends but for the row lock ([`LOCK_TEAM_RUN`]): a team run's write
//! locks the run's row and compares its status, then numbers its events on
//! from the run's last. Reads check the agent's reach first
//! ([`super::sql`]'s `readable`).

use lf_agent::team::{TeamRunChange, numbered};
use lf_agent::{
    EventFilter, NewEvent, TeamEvent, TeamRun, TeamRunFilter, TeamRunId, TeamRunStatus, TeamRunUpdate,
    team_run_not_found,
};
use lf_core::{LenserId, LfResult, Page, PageRequest, Reach, Timestamp};
use sqlx::QueryBuilder;

use super::rows::{
    bind_decision, bind_event, bind_team_run, event, event_columns, team_run, team_run_columns,
};
use super::sql::{AgentRows, agent_exists, readable};
use crate::dialect::{Bind, Columns, Conn, Dialect, Spellings, execute, insert, query, row_of, rows_of};

/// Team run `$1` of agent `$2`, its row locked likewise.
const LOCK_TEAM_RUN: Spellings = Spellings {
    sqlite: concat!("SELECT ", team_run_columns!(), " FROM agent_team_runs WHERE id = $1 AND agent_id = $2"),
    postgres: concat!(
        "SELECT ",
        team_run_columns!(),
        " FROM agent_team_runs WHERE id = $1 AND agent_id = $2 FOR NO KEY UPDATE"
    ),
};

const INSERT_TEAM_RUN: &str = concat!(
    "INSERT INTO agent_team_runs (",
    team_run_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)"
);
const GET_TEAM_RUN: &str =
    concat!("SELECT ", team_run_columns!(), " FROM agent_team_runs WHERE id = $1 AND agent_id = $2");
const TEAM_RUN_OF: &str = "SELECT 1 AS found FROM agent_team_runs WHERE id = $1 AND agent_id = $2";
const ADVANCE_TEAM_RUN: &str = "UPDATE agent_team_runs SET status = $2, updated_at = $3, finished_at = $4, \
     workflow_run_id = $5, decision_approved = $6, decision_by = $7, decision_reason = $8, decision_at = $9, \
     error = $10 WHERE id = $1";
const LAST_EVENT: &str =
    "SELECT seq, at FROM agent_team_events WHERE team_run_id = $1 ORDER BY seq DESC LIMIT 1";
const INSERT_EVENT: &str = concat!(
    "INSERT INTO agent_team_events (",
    event_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
);

/// Appends `events` to `run`, numbered on from its last event, each at
/// `at` or the last event's time, whichever is later.
async fn append<C: Conn>(
    conn: &mut C,
    run: &TeamRun,
    events: &[NewEvent],
    at: Timestamp,
) -> LfResult<Vec<TeamEvent>> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let last = row_of(conn, query(LAST_EVENT).put(run.id.as_uuid()), |row| {
        let seq = row.value::<i64>("seq")?;
        let seq =
            u32::try_from(seq).map_err(|_| crate::error::corrupt(format!("agent_team_events.seq: {seq}")))?;
        Ok((seq, row.time("at")?))
    })
    .await?;
    let out = numbered(run, events, last, at);
    for event in &out {
        insert(conn, bind_event(query::<C::Database>(INSERT_EVENT), event), || {
            format!("event {} of team run {} was written meanwhile", event.seq, run.id)
        })
        .await?;
    }
    Ok(out)
}

pub(crate) async fn create_team_run<C: Conn>(
    conn: &mut C,
    run: &TeamRun,
    events: &[NewEvent],
) -> LfResult<Vec<TeamEvent>> {
    agent_exists(conn, run.agent).await?;
    insert(conn, bind_team_run(query::<C::Database>(INSERT_TEAM_RUN), run), || {
        format!("team run {} already exists", run.id)
    })
    .await?;
    append(conn, run, events, run.created_at).await
}

/// Run it in a snapshot.
pub(crate) async fn get_team_run<C: Conn>(
    conn: &mut C,
    reach: Reach,
    agent: LenserId,
    id: TeamRunId,
) -> LfResult<TeamRun> {
    readable(conn, reach, agent).await?;
    let q = query(GET_TEAM_RUN).put(id.as_uuid()).put(agent.as_uuid());
    row_of(conn, q, team_run).await?.ok_or_else(|| team_run_not_found(id))
}

/// Run it in a snapshot.
pub(crate) async fn list_team_runs<C: Conn>(
    conn: &mut C,
    reach: Reach,
    agent: LenserId,
    filter: &TeamRunFilter,
    page: PageRequest,
) -> LfResult<Page<TeamRun>> {
    readable(conn, reach, agent).await?;
    let rows = AgentRows {
        select: concat!("SELECT ", team_run_columns!()),
        of: " FROM agent_team_runs WHERE agent_id = ",
    };
    let status = |qb: &mut QueryBuilder<C::Database>| {
        if let Some(s) = filter.status {
            <C::Database as Dialect>::push_bind(qb.push(" AND status = "), s.as_str().to_owned());
        }
    };
    rows.page(conn, agent, status, " ORDER BY created_at DESC, id DESC", page, team_run).await
}

/// Every agent's team runs in `$1`, oldest first, from the start.
const RUNS_IN: &str = concat!(
    "SELECT ",
    team_run_columns!(),
    " FROM agent_team_runs WHERE status = $1 ORDER BY created_at, id LIMIT $2"
);
/// The same after the run created at `$2` with id `$3`.
const RUNS_IN_AFTER: &str = concat!(
    "SELECT ",
    team_run_columns!(),
    " FROM agent_team_runs WHERE status = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))",
    " ORDER BY created_at, id LIMIT $4"
);

pub(crate) async fn team_runs_in<C: Conn>(
    conn: &mut C,
    status: TeamRunStatus,
    after: Option<(Timestamp, TeamRunId)>,
    limit: u32,
) -> LfResult<Vec<TeamRun>> {
    let q = match after {
        None => query::<C::Database>(RUNS_IN).put(status.as_str().to_owned()).put(i64::from(limit)),
        Some((at, id)) => query::<C::Database>(RUNS_IN_AFTER)
            .put(status.as_str().to_owned())
            .put_time(at)
            .put(id.as_uuid())
            .put(i64::from(limit)),
    };
    rows_of(conn, q, team_run).await
}

pub(crate) async fn advance_team_run<C: Conn>(
    conn: &mut C,
    change: &TeamRunChange,
) -> LfResult<TeamRunUpdate> {
    let q = query(LOCK_TEAM_RUN.of::<C::Database>()).put(change.id.as_uuid()).put(change.agent.as_uuid());
    let locked = row_of(conn, q, team_run).await?.ok_or_else(|| team_run_not_found(change.id))?;
    let run = change.apply(locked)?;
    let q = query::<C::Database>(ADVANCE_TEAM_RUN)
        .put(run.id.as_uuid())
        .put(run.status.as_str().to_owned())
        .put_time(run.updated_at)
        .put_opt_time(run.finished_at)
        .put(run.workflow_run.map(|w| w.as_uuid()));
    let q = bind_decision(q, run.decision.as_ref()).put(run.error.clone());
    execute(conn, q).await?;
    let events = append(conn, &run, &change.events, change.at).await?;
    Ok(TeamRunUpdate { run, events })
}

/// Run it in a snapshot.
pub(crate) async fn list_events<C: Conn>(
    conn: &mut C,
    reach: Reach,
    agent: LenserId,
    filter: &EventFilter,
    page: PageRequest,
) -> LfResult<Page<TeamEvent>> {
    readable(conn, reach, agent).await?;
    if let Some(run) = filter.team_run {
        let q = query(TEAM_RUN_OF).put(run.as_uuid()).put(agent.as_uuid());
        if row_of(conn, q, |_| Ok(())).await?.is_none() {
            return Err(team_run_not_found(run));
        }
    }
    let rows = AgentRows {
        select: concat!("SELECT ", event_columns!()),
        of: " FROM agent_team_events WHERE agent_id = ",
    };
    let filters = |qb: &mut QueryBuilder<C::Database>| {
        if let Some(run) = filter.team_run {
            <C::Database as Dialect>::push_bind(qb.push(" AND team_run_id = "), run.as_uuid());
        }
        if let Some(kind) = filter.kind {
            <C::Database as Dialect>::push_bind(qb.push(" AND kind = "), kind.as_str().to_owned());
        }
    };
    rows.page(conn, agent, filters, " ORDER BY at DESC, team_run_id DESC, seq DESC", page, event).await
}
