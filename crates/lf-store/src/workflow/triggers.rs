//! The statements of the trigger half of [`lf_workflow::WorkflowStore`]:
//! `workflow_schedules` (one row per workflow whose head is scheduled) and
//! `workflow_event_triggers` (one per head that follows an event), written
//! inside the transactions that write a head ([`sync_triggers`]); a
//! schedule moves forward only from the tick a scheduler read
//! ([`advance`]). The same SQL on both backends.

use lf_core::{EventKind, LenserId, LfResult, Timestamp, WorkflowId};
use lf_workflow::follow::Follower;
use lf_workflow::schedule::ScheduleRow;
use lf_workflow::{WorkflowVersion, WorkflowVersionId};

use crate::dialect::{Bind, Columns, Conn, execute, query, rows_of};
use crate::error::map_db_err;

const UPSERT: &str = "INSERT INTO workflow_schedules (workflow_id, version_id, cron, timezone, next_fire_at) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (workflow_id) DO UPDATE SET version_id = excluded.version_id, \
     cron = excluded.cron, timezone = excluded.timezone, next_fire_at = excluded.next_fire_at";
const REMOVE: &str = "DELETE FROM workflow_schedules WHERE workflow_id = $1";
const DUE: &str = "SELECT s.workflow_id, w.owner_id, s.version_id, s.cron, s.timezone, s.next_fire_at \
     FROM workflow_schedules s JOIN workflows w ON w.id = s.workflow_id \
     WHERE w.archived_at IS NULL AND s.next_fire_at <= $1 ORDER BY s.next_fire_at, s.workflow_id LIMIT $2";
const ADVANCE: &str = "UPDATE workflow_schedules SET next_fire_at = $4 \
     WHERE workflow_id = $1 AND version_id = $2 AND next_fire_at = $3";
const RETIRE: &str =
    "DELETE FROM workflow_schedules WHERE workflow_id = $1 AND version_id = $2 AND next_fire_at = $3";
const UPSERT_FOLLOWER: &str = "INSERT INTO workflow_event_triggers (workflow_id, version_id, event_type) \
     VALUES ($1, $2, $3) ON CONFLICT (workflow_id) DO UPDATE SET version_id = excluded.version_id, \
     event_type = excluded.event_type";
const REMOVE_FOLLOWER: &str = "DELETE FROM workflow_event_triggers WHERE workflow_id = $1";
const FOLLOWERS: &str = "SELECT f.workflow_id, w.owner_id, f.version_id FROM workflow_event_triggers f \
     JOIN workflows w ON w.id = f.workflow_id WHERE w.archived_at IS NULL AND f.event_type = $1 \
     ORDER BY f.workflow_id";
const NEXT: &str = "SELECT min(s.next_fire_at) AS due FROM workflow_schedules s \
     JOIN workflows w ON w.id = s.workflow_id WHERE w.archived_at IS NULL";

/// Makes the schedule row and the event follower say what the new head
/// `version` of a workflow owned by `owner` says; run it in the transaction that writes the head.
pub(crate) async fn sync_triggers<C: Conn>(
    conn: &mut C,
    owner: LenserId,
    version: &WorkflowVersion,
) -> LfResult<()> {
    let q = match ScheduleRow::for_head(owner, version, version.created_at) {
        Some(s) => query::<C::Database>(UPSERT)
            .put(s.workflow_id.as_uuid())
            .put(s.version_id.as_uuid())
            .put(s.cron)
            .put(s.timezone)
            .put_time(s.next_fire_at),
        None => query::<C::Database>(REMOVE).put(version.workflow_id.as_uuid()),
    };
    execute(conn, q).await?;
    let q = match Follower::for_head(owner, version) {
        Some(f) => query::<C::Database>(UPSERT_FOLLOWER)
            .put(f.workflow_id.as_uuid())
            .put(f.version_id.as_uuid())
            .put(f.kind.as_str().to_owned()),
        None => query::<C::Database>(REMOVE_FOLLOWER).put(version.workflow_id.as_uuid()),
    };
    execute(conn, q).await.map(|_| ())
}

pub(crate) async fn followers<C: Conn>(conn: &mut C, kind: EventKind) -> LfResult<Vec<Follower>> {
    rows_of(conn, query::<C::Database>(FOLLOWERS).put(kind.as_str().to_owned()), |row| {
        Ok(Follower {
            workflow_id: WorkflowId::from_uuid(row.value(0)?),
            owner: LenserId::from_uuid(row.value(1)?),
            version_id: WorkflowVersionId::from_uuid(row.value(2)?),
            kind,
        })
    })
    .await
}

pub(crate) async fn due<C: Conn>(conn: &mut C, now: Timestamp, limit: u32) -> LfResult<Vec<ScheduleRow>> {
    rows_of(conn, query::<C::Database>(DUE).put_time(now).put(i64::from(limit)), |row| {
        Ok(ScheduleRow {
            workflow_id: WorkflowId::from_uuid(row.value(0)?),
            owner: LenserId::from_uuid(row.value(1)?),
            version_id: WorkflowVersionId::from_uuid(row.value(2)?),
            cron: row.value(3)?,
            timezone: row.value(4)?,
            next_fire_at: row.time(5)?,
        })
    })
    .await
}

pub(crate) async fn advance<C: Conn>(
    conn: &mut C,
    row: &ScheduleRow,
    to: Option<Timestamp>,
) -> LfResult<bool> {
    let q = match to {
        Some(_) => query::<C::Database>(ADVANCE),
        None => query::<C::Database>(RETIRE),
    }
    .put(row.workflow_id.as_uuid())
    .put(row.version_id.as_uuid())
    .put_time(row.next_fire_at);
    let q = match to {
        Some(t) => q.put_time(t),
        None => q,
    };
    Ok(execute(conn, q).await? == 1)
}

pub(crate) async fn next<C: Conn>(conn: &mut C) -> LfResult<Option<Timestamp>> {
    let row = query::<C::Database>(NEXT).fetch_one(conn.exec()).await.map_err(map_db_err)?;
    row.opt_time("due")
}
