//! The scheduler: starts the runs of scheduled workflows at their ticks.
//!
//! The schedules live in the workflow store beside the heads they were
//! read from ([`WorkflowStore::due_schedules`]). For each due one the
//! scheduler starts a run as the workflow's owner whose idempotency key is
//! the tick ([`ScheduleRow::tick_key`]), then moves the schedule to the
//! first tick after the present, from the tick it read
//! ([`WorkflowStore::advance_schedule`]). So:
//! - after downtime a schedule fires once, for the tick it was waiting for;
//! - two processes firing one tick make one run (the second start finds
//!   the first by its key) and one move (the second move fails);
//! - a process that dies between the start and the move leaves the tick
//!   due, and the next pass finds its run by the key.
//!
//! A tick whose run cannot start (the head no longer validates, its lens is
//! gone) is skipped with a warning in the log: the schedule moves on. A
//! store that fails is tried again at the next pass.

use std::sync::Arc;
use std::time::Duration;

use lf_core::{Clock, ErrorCode, LfResult, SystemClock, Timestamp};
use lf_workflow::WorkflowStore;
use lf_workflow::run::{IdempotencyKey, RunId, RunOrigin, RunService, StartRun};
use lf_workflow::schedule::{Schedule, ScheduleRow};
use tokio_util::sync::CancellationToken;

/// Most schedules fired in one pass; the next pass follows at once.
const BATCH: u32 = 64;
/// Longest sleep between passes: how late the first tick of a schedule
/// written by another process, or due sooner than any known one, can fire.
pub const LONGEST_SLEEP: Duration = Duration::from_secs(10);

/// Starts the runs of due schedules.
#[derive(Clone)]
pub struct Scheduler {
    workflows: Arc<dyn WorkflowStore>,
    starts: Arc<RunService>,
    clock: Arc<dyn Clock>,
}

impl Scheduler {
    pub fn new(workflows: Arc<dyn WorkflowStore>, starts: Arc<RunService>) -> Self {
        Self::with_clock(workflows, starts, Arc::new(SystemClock))
    }

    pub fn with_clock(
        workflows: Arc<dyn WorkflowStore>,
        starts: Arc<RunService>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Scheduler { workflows, starts, clock }
    }

    /// One pass: fires every schedule due now. Returns the runs it made
    /// (not those another process had already made for the same ticks).
    pub async fn fire_due(&self) -> LfResult<Vec<RunId>> {
        let mut made = Vec::new();
        loop {
            let now = self.clock.now();
            let due = self.workflows.due_schedules(now, BATCH).await?;
            let full = due.len() == BATCH as usize;
            for row in due {
                if let Some(run) = self.fire(&row, now).await? {
                    made.push(run);
                }
            }
            if !full {
                return Ok(made);
            }
        }
    }

    async fn fire(&self, row: &ScheduleRow, now: Timestamp) -> LfResult<Option<RunId>> {
        let schedule = match Schedule::parse(&row.cron, &row.timezone) {
            Ok(s) => s,
            Err(why) => {
                // What validated once no longer parses (a zone gone from the
                // database): nothing will ever fire it.
                tracing::warn!(workflow = %row.workflow_id, cron = %row.cron, "the schedule {why}; it is removed");
                self.workflows.advance_schedule(row, None).await?;
                return Ok(None);
            }
        };
        let key = IdempotencyKey::parse("idempotency_key", &row.tick_key())?;
        let start = StartRun {
            workflow_id: Some(row.workflow_id),
            inputs: row.inputs(),
            idempotency_key: Some(key),
            ..StartRun::default()
        };
        let made = match self.starts.start_triggered(RunOrigin::Schedule, row.owner, None, start).await {
            Ok(started) => started.created.then_some(started.run.id),
            Err(e) if e.code() == ErrorCode::Internal => return Err(e),
            Err(e) => {
                tracing::warn!(workflow = %row.workflow_id, tick = %row.next_fire_at.to_rfc3339(), error = %e, "a scheduled workflow did not start for its tick");
                None
            }
        };
        self.workflows.advance_schedule(row, schedule.after_firing(row.next_fire_at, now)).await?;
        Ok(made)
    }

    /// Passes until `stop`: each fires what is due, then sleeps until the
    /// next known tick (at most [`LONGEST_SLEEP`]).
    pub(crate) async fn run(self, stop: CancellationToken) {
        loop {
            if let Err(e) = self.fire_due().await {
                tracing::warn!(error = %e, "the scheduler could not read its schedules; trying again at its next pass");
            }
            let now = self.clock.now();
            let sleep = match self.workflows.next_schedule().await {
                Ok(Some(t)) => until(now, t).min(LONGEST_SLEEP),
                _ => LONGEST_SLEEP,
            };
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(sleep) => {}
            }
        }
    }
}

fn until(now: Timestamp, t: Timestamp) -> Duration {
    Duration::from_micros(u64::try_from(t.as_micros().saturating_sub(now.as_micros())).unwrap_or(0))
}
