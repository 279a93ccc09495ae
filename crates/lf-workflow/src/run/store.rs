//! The storage contract of runs, node results and leases.
//! Implementations: [`super::MemoryRunStore`] here, SQLite and PostgreSQL
//! in lf-store. All of them run [`super::contract::suite`].

use async_trait::async_trait;
use lf_core::{LenserId, LfResult, Page, PageRequest, Timestamp};

use super::model::{Caused, EventBounds, Held, IdempotencyKey, Lease, Room, Run, RunFilter, RunId};
use crate::engine::{NodeRun, RunState, Slot};
use lf_core::WorkflowId;

/// Where runs live, with their node results, and who holds each.
///
/// A run is one row (what [`Run`] has, the state without slots) and one
/// row per slot ([`NodeRun`]). Everything is read back as written: JSON
/// with its key order, timestamps to the microsecond.
///
/// Leases: [`RunStore::claim`] hands a due run to exactly one caller, with
/// a fresh token, even when several processes claim at once (PostgreSQL
/// `FOR UPDATE SKIP LOCKED`, SQLite `BEGIN IMMEDIATE`). A run is *due*
/// when it has not ended and either its lease expired (a takeover,
/// whatever its timers say), or no lease holds it and it is pending, or
/// someone asked to cancel it, or its `wake_at` ([`RunState::resume_at`]
/// when it was last saved) is reached or absent. [`RunStore::save`] writes
/// only under the current token, in one transaction; a write under an
/// old token changes nothing and answers `false`.
///
/// Visibility is the service's job: it checks the workflow's readability
/// through the [`crate::WorkflowStore`] before it reads a run by id.
///
/// Errors every implementation MUST return (other failures are INTERNAL):
/// - NOT_FOUND from reads by id when there is no such run
///   ([`super::run_not_found`]).
/// - CONFLICT from [`RunStore::create_run`] when the run's id is taken.
#[async_trait]
pub trait RunStore: Send + Sync {
    /// Stores a new run (pending, no slots), unless its idempotency key
    /// names a run of the same workflow by the same starter made less than
    /// 24 hours before `run.created_at`: then nothing is written and that
    /// run is returned with `false`. Two racing creations with one key make
    /// one run. A key is its starter's: another lenser's run is never
    /// returned for it.
    async fn create_run(&self, run: &Run) -> LfResult<(Run, bool)>;

    /// Stores a new run that an event starts (its origin `event`), as
    /// [`RunStore::create_run`] does, unless, in this order: its workflow
    /// already has a run in the causal tree of `run.root_run_id` (the root
    /// or a run whose root it is): [`Caused::InTree`]; the tree has
    /// `bounds.tree_max` runs besides its root: [`Caused::TreeFull`], and
    /// the root's `tree_full_at` is set to `run.created_at` if it was not
    /// (`first` when this call set it); its starter has `bounds.per_minute`
    /// runs of origin `event` made in the minute before `run.created_at`:
    /// [`Caused::TooFast`]. The checks and the write are one transaction,
    /// exclusive of other such creations in the same tree and for the same
    /// starter (in every process on the database), so that no bound is
    /// passed by creations racing each other.
    async fn create_caused(&self, run: &Run, bounds: EventBounds) -> LfResult<Caused>;

    /// The runs an agent started ([`Run::agent`]) that ended (their
    /// `finished_at` set) and whose spend is not marked charged to it
    /// ([`RunStore::mark_charged`]), earliest end first (then by id), at
    /// most `limit`: for the runner's catch-up, which charges the ends
    /// nobody charged.
    async fn to_charge(&self, limit: u32) -> LfResult<Vec<RunId>>;

    /// Marks run `id`'s spend charged to its agent at `at`; a run marked
    /// already keeps its first mark. NOT_FOUND if there is no such run.
    async fn mark_charged(&self, id: RunId, at: Timestamp) -> LfResult<()>;

    /// The run, with `state.slots` empty.
    async fn get_run(&self, id: RunId) -> LfResult<Run>;

    /// The run with every node result.
    async fn load_run(&self, id: RunId) -> LfResult<Run>;

    /// The run of `workflow` that `starter` made with this key less than
    /// 24 hours before `now`.
    async fn find_by_key(
        &self,
        workflow: WorkflowId,
        starter: LenserId,
        key: &IdempotencyKey,
        now: Timestamp,
    ) -> LfResult<Option<Run>>;

    /// Runs newest first. With a workflow in the filter: that workflow's
    /// runs; without: those `me` started or whose workflow `me` owns; with
    /// `started_by`, only that lenser's, in the query.
    async fn list_runs(&self, me: LenserId, filter: &RunFilter, page: PageRequest) -> LfResult<Page<Run>>;

    /// Claims the due runs `room` leaves room for, for `owner`: in turns by
    /// starter, oldest due first within a turn, each with a new token valid
    /// until `now + lease_ms`.
    async fn claim(&self, owner: &str, now: Timestamp, lease_ms: u64, room: &Room) -> LfResult<Vec<Lease>>;

    /// Extends the lease to `now + lease_ms` if it is still held.
    async fn heartbeat(&self, lease: &Lease, now: Timestamp, lease_ms: u64) -> LfResult<Held>;

    /// Writes the run's state (status, times, result, error, next wake)
    /// and the given node results, under `lease`. With `release`, the
    /// lease ends in the same write (the run then waits for its `wake_at`,
    /// or has ended). `false`: the lease was lost and nothing was written.
    async fn save(
        &self,
        lease: &Lease,
        state: &RunState,
        slots: &[(Slot, NodeRun)],
        release: bool,
    ) -> LfResult<bool>;

    /// Records that `by` asked to cancel the run and makes it due at once
    /// if no runner holds it, so that a runner claims it and stops it
    /// (the engine decides what cancelling does). Returns the run as it
    /// is after the write; a run that has ended is returned unchanged.
    async fn request_cancel(&self, id: RunId, by: &str, now: Timestamp) -> LfResult<Run>;

    /// Makes the run's waiting steps ([`RunState::waiting`]: steps that
    /// wait for a person's decision) due at `now`, their `wake_at` brought
    /// forward, and the run with them unless a lease holds it (its holder
    /// is told through the [`super::RunSignal`]): what a decision does, so
    /// that the step goes on at once. A run that ended, or has no waiting
    /// step, is left as it is.
    ///
    /// The default does nothing: a store without it leaves waiting steps
    /// to their own timers (a waiting step checks again every minute or
    /// so), which is slower but loses nothing. The memory store and lf-store's
    /// SQL stores implement it; [`super::contract::wake_suite`] checks it.
    async fn wake(&self, id: RunId, now: Timestamp) -> LfResult<()> {
        let _ = (id, now);
        Ok(())
    }

    /// When the earliest run that has not ended becomes due (its lease's
    /// end for a held run; for a free one its creation if it is pending or
    /// asked to cancel, else its wake time), leaving out the runs of the
    /// `full` starters but those a `sub_workflow` step started (a claim
    /// would not take them, [`Room::full`]): the runner sleeps until then
    /// unless woken.
    async fn next_due(&self, full: &[LenserId]) -> LfResult<Option<Timestamp>>;

    /// News of runs made, or asked to cancel, by other processes on the
    /// same database, so that their runners wake at once instead of at
    /// their next due time. `None` (the default): the store has no way to
    /// tell (memory, SQLite), and runners rely on [`RunStore::next_due`].
    async fn wakeups(&self) -> LfResult<Option<Box<dyn Wakeups>>> {
        Ok(None)
    }
}

/// A subscription to other processes' new runs and cancel requests.
#[async_trait]
pub trait Wakeups: Send {
    /// Waits for the next one: the run it is about. An error means the
    /// subscription is gone (the runner then subscribes again).
    async fn next(&mut self) -> LfResult<RunId>;
}
