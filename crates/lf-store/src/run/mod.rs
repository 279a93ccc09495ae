//! [`RunStore`] over either backend: the tables of `0008_runs.sql`
//! (SQLite) and `0007_runs.sql` (PostgreSQL), through the statements of
//! `sql`, the same on both. Creating a run, claiming, saving and asking to
//! cancel run in one write transaction each, loading a run with its node
//! results in one read snapshot, a heartbeat as one statement, other reads
//! as one statement each (see [`crate::conns`]). Why concurrent claims,
//! saves and creations stay exclusive is in `sql`.

pub(crate) mod rows;
pub(crate) mod sql;

use async_trait::async_trait;
use lf_core::{LenserId, LfResult, Page, PageRequest, Timestamp, WorkflowId};
use lf_workflow::engine::{NodeRun, RunState, Slot};
use lf_workflow::run::{
    Caused, EventBounds, Held, IdempotencyKey, Lease, Room, Run, RunFilter, RunId, RunStore, Wakeups,
};

use crate::conns::{Conns, on};
use crate::error::map_db_err;

/// [`RunStore`] over either backend.
pub(crate) struct SqlRunStore {
    conns: Conns,
}

impl SqlRunStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

#[async_trait]
impl RunStore for SqlRunStore {
    async fn create_run(&self, run: &Run) -> LfResult<(Run, bool)> {
        on!(&self.conns, write, |conn| sql::create_run(conn, run))
    }

    async fn create_caused(&self, run: &Run, bounds: EventBounds) -> LfResult<Caused> {
        on!(&self.conns, write, |conn| sql::create_caused(conn, run, bounds))
    }

    async fn get_run(&self, id: RunId) -> LfResult<Run> {
        on!(&self.conns, reading, |conn| sql::get_run(conn, id))
    }

    async fn load_run(&self, id: RunId) -> LfResult<Run> {
        on!(&self.conns, snapshot, |conn| sql::load_run(conn, id))
    }

    async fn find_by_key(
        &self,
        workflow: WorkflowId,
        starter: LenserId,
        key: &IdempotencyKey,
        now: Timestamp,
    ) -> LfResult<Option<Run>> {
        on!(&self.conns, reading, |conn| sql::by_key(conn, workflow, starter, key, now))
    }

    async fn list_runs(&self, me: LenserId, filter: &RunFilter, page: PageRequest) -> LfResult<Page<Run>> {
        on!(&self.conns, reading, |conn| sql::list_runs(conn, me, filter, page))
    }

    async fn claim(&self, owner: &str, now: Timestamp, lease_ms: u64, room: &Room) -> LfResult<Vec<Lease>> {
        on!(&self.conns, write, |conn| sql::claim(conn, owner, now, lease_ms, room))
    }

    async fn heartbeat(&self, lease: &Lease, now: Timestamp, lease_ms: u64) -> LfResult<Held> {
        on!(&self.conns, write_one, |conn| sql::heartbeat(conn, lease, now, lease_ms))
    }

    async fn save(
        &self,
        lease: &Lease,
        state: &RunState,
        slots: &[(Slot, NodeRun)],
        release: bool,
    ) -> LfResult<bool> {
        on!(&self.conns, write, |conn| sql::save(conn, lease, state, slots, release))
    }

    async fn request_cancel(&self, id: RunId, by: &str, now: Timestamp) -> LfResult<Run> {
        on!(&self.conns, write, |conn| sql::request_cancel(conn, id, by, now))
    }

    async fn wake(&self, id: RunId, now: Timestamp) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::wake(conn, id, now))
    }

    async fn to_charge(&self, limit: u32) -> LfResult<Vec<RunId>> {
        on!(&self.conns, reading, |conn| sql::to_charge(conn, limit))
    }

    async fn mark_charged(&self, id: RunId, at: Timestamp) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::mark_charged(conn, id, at))
    }

    async fn next_due(&self, full: &[LenserId]) -> LfResult<Option<Timestamp>> {
        on!(&self.conns, reading, |conn| sql::next_due(conn, full))
    }

    /// PostgreSQL: `LISTEN` on the channel that run creations and cancel
    /// requests notify, on a connection of its own.
    async fn wakeups(&self) -> LfResult<Option<Box<dyn Wakeups>>> {
        match &self.conns {
            Conns::Sqlite(_) => Ok(None),
            Conns::Postgres(pool) => {
                let mut listener =
                    sqlx::postgres::PgListener::connect_with(pool).await.map_err(map_db_err)?;
                listener.listen(sql::CHANNEL).await.map_err(map_db_err)?;
                Ok(Some(Box::new(Listening(listener))))
            }
        }
    }
}

/// Notifications of runs made or asked to cancel by other processes.
struct Listening(sqlx::postgres::PgListener);

#[async_trait]
impl Wakeups for Listening {
    async fn next(&mut self) -> LfResult<RunId> {
        loop {
            let n = self.0.recv().await.map_err(map_db_err)?;
            // A payload that is no run id is not ours to act on.
            if let Ok(id) = RunId::parse("payload", n.payload()) {
                return Ok(id);
            }
        }
    }
}
