//! The statements of [`lf_workflow::run::RunStore`] and the code that runs
//! them, the same on both backends but for the few spelled twice (the row
//! locks of a claim, the larger of two times) and the key lock PostgreSQL
//! alone takes. The store supplies the connection, the read snapshot or
//! the write transaction (see `run/mod.rs`).
//!
//! What makes each write safe when several processes share the database:
//! - a claim picks the due runs and gives each a new token in one write
//!   transaction: on SQLite `BEGIN IMMEDIATE` holds the write lock from the
//!   first read; on PostgreSQL the pick locks its rows `FOR UPDATE SKIP
//!   LOCKED`, so a concurrent claim passes over them, and rechecks that a
//!   row is still due on its newest version, so a row another claim took
//!   since this one's snapshot is left;
//! - a save changes the run row only `WHERE lease_token` is the saver's,
//!   and writes node results only when that row changed, in one
//!   transaction (PostgreSQL: the row lock the update takes orders it
//!   after a claim that took the run over);
//! - a creation with an idempotency key looks the key up and inserts in one
//!   write transaction, serialized by SQLite's write lock or by a
//!   PostgreSQL advisory lock on the workflow and key ([`LOCK_KEY`]):
//!   there is no unique index to lean on, since a key names a run for 24
//!   hours only.

use lf_core::{LenserId, LfError, LfResult, Page, PageRequest, Timestamp, WorkflowId};
use lf_workflow::engine::{NodeRun, RunState, Slot};
use lf_workflow::run::{
    Caused, EventBounds, Held, IDEMPOTENCY_WINDOW_MICROS, IdempotencyKey, Lease, LeaseToken, Room, Run,
    RunFilter, RunId, run_not_found,
};
use sqlx::QueryBuilder;
use uuid::Uuid;

use super::rows::{
    bind_node_result, bind_run, bind_state, node_result, node_result_columns, run, run_columns, state_columns,
};
use crate::backend::Backend;
use crate::dialect::{
    Bind, Columns, Conn, Dialect, Spellings, all_rows, execute, insert, query, row_of, spelled,
};
use crate::error::map_db_err;
use crate::page::listing;

/// Runs that have not ended: the condition of the `workflow_runs_due`
/// partial index, spelled as it is there so that both planners use it.
macro_rules! unfinished {
    () => {
        "status NOT IN ('completed', 'failed', 'cancelled')"
    };
}

/// When a run that no lease holds becomes due: at once (its creation)
/// when it is pending or someone asked to cancel it, else at its wake
/// time, or at once when it has none.
macro_rules! free_at {
    () => {
        "CASE WHEN status = 'pending' OR cancel_requested_by IS NOT NULL THEN created_at \
         ELSE coalesce(wake_at, created_at) END"
    };
}

const INSERT_RUN: &str = concat!(
    "INSERT INTO workflow_runs (",
    run_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, \
     $21, $22, $23, $24, $25, $26, $27, $28, $29)"
);
const RUN_EXISTS: &str = "SELECT 1 AS taken FROM workflow_runs WHERE id = $1";
const GET_RUN: &str = concat!("SELECT ", run_columns!(), " FROM workflow_runs WHERE id = $1");
const NODE_RESULTS: &str = concat!(
    "SELECT ",
    node_result_columns!(),
    " FROM workflow_node_results WHERE run_id = $1 ORDER BY node, item"
);
/// The newest run of workflow `$1` that `$4` started with key `$2` after `$3`.
const BY_KEY: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM workflow_runs WHERE workflow_id = $1 AND idempotency_key = $2 \
     AND created_at > $3 AND started_by = $4 ORDER BY created_at DESC LIMIT 1"
);
/// Serializes creations with key `$2` on workflow `$1` until the
/// transaction ends. PostgreSQL only: on SQLite the write transaction
/// already holds the database's write lock.
const LOCK_KEY: &str = "SELECT pg_advisory_xact_lock(hashtextextended($1::text || ' ' || $2, 0))";
/// Serializes the creations of runs that events start in tree `$1`, then
/// those for starter `$2`, until the transaction ends (PostgreSQL only, as
/// [`LOCK_KEY`]). Every such creation takes both in this order, so none
/// waits for another in a cycle.
const LOCK_TREE: &str = "SELECT pg_advisory_xact_lock(hashtextextended('tree ' || $1::text, 0))";
const LOCK_STARTER: &str = "SELECT pg_advisory_xact_lock(hashtextextended('event starts ' || $1::text, 0))";
/// Whether workflow `$2` has a run in the tree of root `$1`.
const IN_TREE: &str =
    "SELECT 1 AS found FROM workflow_runs WHERE workflow_id = $2 AND (id = $1 OR root_run_id = $1) LIMIT 1";
/// How many runs root `$1` caused.
const TREE_SIZE: &str = "SELECT count(*) AS n FROM workflow_runs WHERE root_run_id = $1 AND id <> $1";
/// Records on root `$1`, once, that its tree was full at `$2`.
const TREE_FULL: &str = "UPDATE workflow_runs SET tree_full_at = $2 WHERE id = $1 AND tree_full_at IS NULL";
/// How many runs events started for `$1` after `$2`.
const EVENT_STARTS: &str = "SELECT count(*) AS n FROM workflow_runs WHERE started_by = $1 AND origin = 'event' \
     AND created_at > $2";
/// The channel other processes' runners listen on (PostgreSQL only); a
/// notification is delivered when its transaction commits.
pub(crate) const CHANNEL: &str = "lf_workflow_runs";
const NOTIFY: &str = "SELECT pg_notify('lf_workflow_runs', $1)";

/// Whether a run is due at `$1`. Held past its lease: a takeover,
/// whatever its timers say.
macro_rules! is_due {
    () => {
        concat!(
            unfinished!(),
            " AND ((lease_token IS NOT NULL AND lease_expires_at <= $1) \
             OR (lease_token IS NULL AND (status = 'pending' OR cancel_requested_by IS NOT NULL \
             OR wake_at IS NULL OR wake_at <= $1)))"
        )
    };
}

/// A run's starter as the claim's JSON names it ([`hex`]).
macro_rules! starter_key {
    (sqlite) => {
        "lower(hex(started_by))"
    };
    (postgres) => {
        "started_by"
    };
}

/// Up to `$2` runs due at `$1`, in turns by starter ([`lf_workflow::run::Room`]):
/// a starter's `n`th due run (its sub-workflows' runs first, then oldest
/// due first) has turn `n` plus the runs of theirs the claimer holds
/// (`$4`, a JSON object of starter ids in hex to counts); a run past turn
/// `$3` waits, unless a `sub_workflow` step started it. Lower turns
/// first, then oldest due first (ids break ties). On PostgreSQL the
/// turns are counted from every due run, locked or not; the rows are
/// locked after, and rechecked as they are.
macro_rules! due {
    ($b:tt) => {
        concat!(
            "WITH held AS (",
            due!(held $b),
            "), turns AS (SELECT id AS run_id, coalesce(wake_at, created_at) AS due_at, \
             origin = 'sub_workflow' AS nested, ROW_NUMBER() OVER (PARTITION BY started_by \
             ORDER BY CASE WHEN origin = 'sub_workflow' THEN 0 ELSE 1 END, coalesce(wake_at, created_at), id) \
             + coalesce((SELECT n FROM held WHERE starter = ",
            starter_key!($b),
            "), 0) AS turn FROM workflow_runs WHERE ",
            is_due!(),
            ") SELECT id, started_by FROM workflow_runs JOIN turns ON run_id = id \
             WHERE (nested OR turn <= $3) AND ",
            is_due!(),
            " ORDER BY turn, due_at, id LIMIT $2",
            due!(lock $b)
        )
    };
    (held sqlite) => {
        "SELECT key AS starter, value AS n FROM json_each($4)"
    };
    (held postgres) => {
        "SELECT key::uuid AS starter, value::bigint AS n FROM jsonb_each_text($4::jsonb)"
    };
    (lock sqlite) => {
        ""
    };
    // Rows another claim has locked are passed over, not waited for.
    (lock postgres) => {
        " FOR UPDATE OF workflow_runs SKIP LOCKED"
    };
}
const DUE: Spellings = spelled!(due);
const TAKE: &str =
    "UPDATE workflow_runs SET lease_owner = $2, lease_token = $3, lease_expires_at = $4 WHERE id = $1";
const HEARTBEAT: &str = concat!(
    "UPDATE workflow_runs SET lease_expires_at = $3 WHERE id = $1 AND lease_token = $2 AND ",
    unfinished!(),
    " RETURNING cancel_requested_by"
);
/// A run's state (`$3`..`$14`) and when to take it again (`$15`,
/// [`RunState::resume_at`]), under lease token
/// `$2`; with `$16` the lease ends.
const SAVE: &str = concat!(
    "UPDATE workflow_runs SET (",
    state_columns!(),
    ", wake_at) = ($3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15), \
     lease_owner = CASE WHEN $16 THEN NULL ELSE lease_owner END, \
     lease_token = CASE WHEN $16 THEN NULL ELSE lease_token END, \
     lease_expires_at = CASE WHEN $16 THEN NULL ELSE lease_expires_at END \
     WHERE id = $1 AND lease_token = $2"
);
const UPSERT_NODE_RESULT: &str = concat!(
    "INSERT INTO workflow_node_results (",
    node_result_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
     ON CONFLICT (run_id, node, item) DO UPDATE SET \
     (status, attempt, input, output, error_code, error_message, wake_at, started_at, finished_at, \
     model_calls, tokens, credits, log_level, log_message) = \
     (excluded.status, excluded.attempt, excluded.input, excluded.output, excluded.error_code, \
     excluded.error_message, excluded.wake_at, excluded.started_at, excluded.finished_at, \
     excluded.model_calls, excluded.tokens, excluded.credits, excluded.log_level, excluded.log_message)"
);
/// `$2` asks to cancel run `$1` at `$3`: a run no lease holds is due then.
const REQUEST_CANCEL: &str = concat!(
    "UPDATE workflow_runs SET cancel_requested_by = $2, \
     wake_at = CASE WHEN lease_token IS NULL THEN $3 ELSE wake_at END \
     WHERE id = $1 AND cancel_requested_by IS NULL AND ",
    unfinished!()
);
/// Steps of run `$1` waiting for a decision (running, a wake time later
/// than `$2`, `waiting_for` in their output) are due at `$2`.
macro_rules! wake_nodes {
    ($b:tt) => {
        concat!(
            "UPDATE workflow_node_results SET wake_at = $2 WHERE run_id = $1 AND status = 'running' \
             AND wake_at > $2 AND ",
            wake_nodes!(waiting $b)
        )
    };
    (waiting sqlite) => {
        "json_extract(output, '$.waiting_for') IS NOT NULL"
    };
    (waiting postgres) => {
        "(output::jsonb -> 'waiting_for') IS NOT NULL"
    };
}
const WAKE_NODES: Spellings = spelled!(wake_nodes);
/// Run `$1`, when no lease holds it, is due at `$2` (or earlier).
const WAKE_RUN: &str = concat!(
    "UPDATE workflow_runs SET wake_at = CASE WHEN wake_at IS NULL OR wake_at > $2 THEN $2 ELSE wake_at END \
     WHERE id = $1 AND lease_token IS NULL AND ",
    unfinished!()
);
/// When the earliest unfinished run becomes due: a held run when its lease
/// ends, any other when it is free; but the runs of the starters in `$1`
/// (a JSON array of ids in hex), unless a `sub_workflow` step started them.
macro_rules! next_due {
    ($b:tt) => {
        concat!(
            "SELECT min(CASE WHEN lease_token IS NULL THEN ",
            free_at!(),
            " ELSE lease_expires_at END) AS due FROM workflow_runs WHERE ",
            unfinished!(),
            " AND (origin = 'sub_workflow' OR ",
            starter_key!($b),
            " NOT IN (",
            next_due!(full $b),
            "))"
        )
    };
    (full sqlite) => {
        "SELECT value FROM json_each($1)"
    };
    (full postgres) => {
        "SELECT value::uuid FROM jsonb_array_elements_text($1::jsonb)"
    };
}
const NEXT_DUE: Spellings = spelled!(next_due);

/// An agent's ended runs not charged yet: the condition of the
/// `workflow_runs_to_charge` partial index, as it is spelled there.
const TO_CHARGE: &str = "SELECT id FROM workflow_runs \
     WHERE agent_id IS NOT NULL AND agent_charged_at IS NULL AND finished_at IS NOT NULL \
     ORDER BY finished_at, id LIMIT $1";
const MARK_CHARGED: &str =
    "UPDATE workflow_runs SET agent_charged_at = $2 WHERE id = $1 AND agent_charged_at IS NULL";

/// `millis` milliseconds after `t`, saturating.
fn after(t: Timestamp, millis: u64) -> Timestamp {
    t.plus_micros(i64::try_from(millis).unwrap_or(i64::MAX).saturating_mul(1_000))
}

/// The run as stored: without its slots.
fn header(run: &Run) -> Run {
    let mut r = run.clone();
    r.state.slots.clear();
    r
}

fn run_taken(id: RunId) -> String {
    format!("run {id} already exists")
}

pub(crate) async fn create_run<C: Conn>(conn: &mut C, r: &Run) -> LfResult<(Run, bool)> {
    if let Some(first) = taken_key(conn, r).await? {
        return Ok((first, false));
    }
    insert(conn, bind_run(query(INSERT_RUN), r), || run_taken(r.id)).await?;
    notify(conn, r.id).await?;
    Ok((header(r), true))
}

/// See [`lf_workflow::run::RunStore::create_caused`]; in a write transaction.
pub(crate) async fn create_caused<C: Conn>(conn: &mut C, r: &Run, bounds: EventBounds) -> LfResult<Caused> {
    if let Some(first) = taken_key(conn, r).await? {
        return Ok(Caused::Made(Box::new(first), false));
    }
    let root = r.root_run_id.as_uuid();
    if <C::Database as Dialect>::BACKEND == Backend::Postgres {
        execute(conn, query(LOCK_TREE).put(root)).await?;
        execute(conn, query(LOCK_STARTER).put(r.started_by.as_uuid())).await?;
    }
    let q = query(IN_TREE).put(root).put(r.workflow_id.as_uuid());
    if row_of(conn, q, |_| Ok(())).await?.is_some() {
        return Ok(Caused::InTree);
    }
    let count =
        |row: &_| -> LfResult<u64> { Ok(u64::try_from(Columns::value::<i64>(row, "n")?).unwrap_or(0)) };
    let size = row_of(conn, query(TREE_SIZE).put(root), count).await?.unwrap_or(0);
    if size >= bounds.tree_max {
        let first = execute(conn, query(TREE_FULL).put(root).put_time(r.created_at)).await? == 1;
        return Ok(Caused::TreeFull { first });
    }
    let since = r.created_at.plus_micros(-60_000_000);
    let q = query(EVENT_STARTS).put(r.started_by.as_uuid()).put_time(since);
    if row_of(conn, q, count).await?.unwrap_or(0) >= bounds.per_minute {
        return Ok(Caused::TooFast);
    }
    insert(conn, bind_run(query(INSERT_RUN), r), || run_taken(r.id)).await?;
    notify(conn, r.id).await?;
    Ok(Caused::Made(Box::new(header(r)), true))
}

/// The run an earlier creation made with `r`'s key, if any (none without
/// one), holding the key's lock on PostgreSQL; CONFLICT when `r`'s id is taken.
async fn taken_key<C: Conn>(conn: &mut C, r: &Run) -> LfResult<Option<Run>> {
    if let Some(key) = &r.idempotency_key {
        if <C::Database as Dialect>::BACKEND == Backend::Postgres {
            let lock = query(LOCK_KEY).put(r.workflow_id.as_uuid()).put(key.as_str().to_owned());
            execute(conn, lock).await?;
        }
        // A taken id is CONFLICT even when its run has this key.
        if row_of(conn, query(RUN_EXISTS).put(r.id.as_uuid()), |_| Ok(())).await?.is_some() {
            return Err(LfError::conflict(run_taken(r.id)));
        }
        return by_key(conn, r.workflow_id, r.started_by, key, r.created_at).await;
    }
    Ok(None)
}

/// Tells the runners of other processes that run `id` may be due, or
/// asked to stop.
async fn notify<C: Conn>(conn: &mut C, id: RunId) -> LfResult<()> {
    if <C::Database as Dialect>::BACKEND == Backend::Postgres {
        execute(conn, query(NOTIFY).put(id.to_string())).await?;
    }
    Ok(())
}

pub(crate) async fn get_run<C: Conn>(conn: &mut C, id: RunId) -> LfResult<Run> {
    row_of(conn, query(GET_RUN).put(id.as_uuid()), run).await?.ok_or_else(|| run_not_found(id))
}

/// The run and its node results; run it in a read snapshot, so that both
/// queries see one state.
pub(crate) async fn load_run<C: Conn>(conn: &mut C, id: RunId) -> LfResult<Run> {
    let mut r = get_run(conn, id).await?;
    r.state.slots = all_rows(conn, NODE_RESULTS, id.as_uuid(), node_result).await?.into_iter().collect();
    Ok(r)
}

pub(crate) async fn by_key<C: Conn>(
    conn: &mut C,
    workflow: WorkflowId,
    starter: LenserId,
    key: &IdempotencyKey,
    now: Timestamp,
) -> LfResult<Option<Run>> {
    let q = query(BY_KEY)
        .put(workflow.as_uuid())
        .put(key.as_str().to_owned())
        .put_time(now.plus_micros(-IDEMPOTENCY_WINDOW_MICROS))
        .put(starter.as_uuid());
    row_of(conn, q, run).await
}

/// The `FROM … WHERE` of a listing: a workflow's runs, or those `me`
/// started or whose workflow `me` owns; of one starter or all (the
/// reader's [`lf_workflow::run::RunScope`]); of one status or all.
fn push_from<DB: Dialect>(qb: &mut QueryBuilder<DB>, me: LenserId, filter: &RunFilter) {
    qb.push(" FROM workflow_runs WHERE ");
    if let Some(w) = filter.workflow_id {
        DB::push_bind(qb.push("workflow_id = "), w.as_uuid());
    } else {
        DB::push_bind(qb.push("(started_by = "), me.as_uuid());
        DB::push_bind(qb.push(" OR workflow_owner = "), me.as_uuid()).push(")");
    }
    if let Some(s) = filter.started_by {
        DB::push_bind(qb.push(" AND started_by = "), s.as_uuid());
    }
    if let Some(s) = filter.status {
        DB::push_bind(qb.push(" AND status = "), s.as_str().to_owned());
    }
}

pub(crate) async fn list_runs<C: Conn>(
    conn: &mut C,
    me: LenserId,
    filter: &RunFilter,
    page: PageRequest,
) -> LfResult<Page<Run>> {
    let select = concat!("SELECT ", run_columns!());
    let from = |qb: &mut QueryBuilder<C::Database>| push_from(qb, me, filter);
    listing(conn, select, from, " ORDER BY created_at DESC, id DESC", page, run).await
}

/// A starter as the claim's JSON names it.
fn hex(starter: LenserId) -> String {
    starter.as_uuid().simple().to_string()
}

/// Claims the due runs `room` leaves room for; run it in a write
/// transaction, which keeps what [`DUE`] picked for this claim until it
/// commits.
pub(crate) async fn claim<C: Conn>(
    conn: &mut C,
    owner: &str,
    now: Timestamp,
    lease_ms: u64,
    room: &Room,
) -> LfResult<Vec<Lease>> {
    let held: serde_json::Map<String, serde_json::Value> =
        room.held.iter().map(|(s, n)| (hex(*s), (*n).into())).collect();
    let due = query::<C::Database>(DUE.of::<C::Database>())
        .put_time(now)
        .put(i64::from(room.limit))
        .put(i64::from(room.share))
        .put(serde_json::Value::Object(held).to_string())
        .fetch_all(conn.exec())
        .await
        .map_err(map_db_err)?;
    let expires_at = after(now, lease_ms);
    let mut leases = Vec::with_capacity(due.len());
    for row in &due {
        let lease = Lease {
            run: RunId::from_uuid(row.value::<Uuid>("id")?),
            starter: LenserId::from_uuid(row.value::<Uuid>("started_by")?),
            token: LeaseToken::new(),
            owner: owner.to_owned(),
            expires_at,
        };
        let q = query(TAKE)
            .put(lease.run.as_uuid())
            .put(owner.to_owned())
            .put(lease.token.as_uuid())
            .put_time(expires_at);
        execute(conn, q).await?;
        leases.push(lease);
    }
    Ok(leases)
}

pub(crate) async fn heartbeat<C: Conn>(
    conn: &mut C,
    lease: &Lease,
    now: Timestamp,
    lease_ms: u64,
) -> LfResult<Held> {
    let q =
        query(HEARTBEAT).put(lease.run.as_uuid()).put(lease.token.as_uuid()).put_time(after(now, lease_ms));
    let held =
        row_of(conn, q, |row| Ok(Held::Yes { cancel_requested_by: row.value("cancel_requested_by")? }));
    Ok(held.await?.unwrap_or(Held::Lost))
}

/// Writes `state` and `slots` under `lease`; run it in a write
/// transaction. `false`, with nothing written, when the lease is lost.
pub(crate) async fn save<C: Conn>(
    conn: &mut C,
    lease: &Lease,
    state: &RunState,
    slots: &[(Slot, NodeRun)],
    release: bool,
) -> LfResult<bool> {
    let q = query::<C::Database>(SAVE).put(lease.run.as_uuid()).put(lease.token.as_uuid());
    let q = bind_state(q, state).put_opt_time(state.resume_at()).put(release || state.status.is_final());
    if execute(conn, q).await? == 0 {
        return Ok(false);
    }
    for (slot, n) in slots {
        execute(conn, bind_node_result(query(UPSERT_NODE_RESULT), lease.run, *slot, n)).await?;
    }
    Ok(true)
}

/// Records the request and reads the run back; run it in a write
/// transaction.
pub(crate) async fn request_cancel<C: Conn>(
    conn: &mut C,
    id: RunId,
    by: &str,
    now: Timestamp,
) -> LfResult<Run> {
    if execute(conn, query(REQUEST_CANCEL).put(id.as_uuid()).put(by.to_owned()).put_time(now)).await? > 0 {
        notify(conn, id).await?;
    }
    get_run(conn, id).await
}

pub(crate) async fn wake<C: Conn>(conn: &mut C, id: RunId, now: Timestamp) -> LfResult<()> {
    let woke = execute(conn, query(WAKE_NODES.of::<C::Database>()).put(id.as_uuid()).put_time(now)).await?;
    if woke > 0 && execute(conn, query(WAKE_RUN).put(id.as_uuid()).put_time(now)).await? > 0 {
        notify(conn, id).await?;
    }
    Ok(())
}

pub(crate) async fn to_charge<C: Conn>(conn: &mut C, limit: u32) -> LfResult<Vec<RunId>> {
    all_rows(conn, TO_CHARGE, i64::from(limit), |row| Ok(RunId::from_uuid(row.value::<Uuid>("id")?))).await
}

/// Run it as one statement: a run already marked keeps its mark.
pub(crate) async fn mark_charged<C: Conn>(conn: &mut C, id: RunId, at: Timestamp) -> LfResult<()> {
    if execute(conn, query(MARK_CHARGED).put(id.as_uuid()).put_time(at)).await? == 0 {
        get_run(conn, id).await?;
    }
    Ok(())
}

pub(crate) async fn next_due<C: Conn>(conn: &mut C, full: &[LenserId]) -> LfResult<Option<Timestamp>> {
    let full = serde_json::Value::from(full.iter().map(|s| hex(*s)).collect::<Vec<_>>()).to_string();
    let q = query::<C::Database>(NEXT_DUE.of::<C::Database>()).put(full);
    let row = q.fetch_one(conn.exec()).await.map_err(map_db_err)?;
    row.opt_time("due")
}
