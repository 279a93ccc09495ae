//! The engine: how a run moves from its trigger to its end, as one pure
//! function ([`step`]) from the run's state and an event to the next
//! actions. The runner (beside this crate, on tokio) stores the state,
//! runs the executors the actions name and feeds their results back as
//! events; it decides nothing about the graph.
//!
//! - A run is pinned to one version, laid out once as a [`Plan`].
//! - A node starts when every connection into it has settled: a
//!   connection whose source completed carries what its `output_key`
//!   picks (if its `condition` holds); one from a failed source carries
//!   the error only from the `error` output; one from a skipped source
//!   carries nothing. A node none of whose connections carried anything
//!   is skipped, which is how `if_condition` and `switch` branches not
//!   taken are skipped and why `merge` waits only for what reaches it.
//! - At most [`Limits::parallel`] executed nodes run at once (default 4).
//! - A failed attempt is retried per the node type's `retry_behavior`,
//!   with exponential backoff and ±25 % jitter, on a durable timer. A node
//!   that failed for good is handled, in order, by its own `error`
//!   connections (to an `error_catch`), by the loop it is in (the loop
//!   fails), by the innermost `try_catch` guarding it (its `catch` output
//!   then carries the error, and the other guarded steps are cancelled),
//!   or else it fails the run.
//! - `loop_map` runs its body (every step reachable from its `item`
//!   output) once per item, at most `max_items` (default 100); its
//!   `results` output is the body's last step's output per item. Loops do
//!   not nest (a sub-workflow does).
//! - `wait_delay` and retries are timers in the state, not sleeping
//!   tasks: [`RunState::next_wake`] says when to fire [`Event::TimerFired`].
//!   So is an attempt an executor answered "not before T" for
//!   ([`Event::NodeDeferred`], a full rate-limit window): it stays running
//!   with its timer, is not a retry, and runs again with the same attempt
//!   number when the timer fires (also after a takeover, not before).
//! - An attempt may save where it is ([`Event::NodeCheckpoint`]): the
//!   state it gives is kept as the node's `output` (`{"checkpoint": ..}`)
//!   until the node ends, and handed back to it whenever it runs again
//!   (after a takeover, its timer, a retry), so work it did is not done
//!   twice. With a [`Wait`] it also waits (for a person's decision): it
//!   stays running, holds no place under the parallel bound, shows what
//!   it waits for (`{"waiting_for": ..}`, [`RunState::waiting`]), and runs
//!   again, the same attempt, when its timer fires or the run is woken
//!   ([`Event::Woken`]). The time it waits is added to the run's time
//!   limit, so a person's slowness does not time the run out.
//! - A model-calling node is not started once the run's credits reach its
//!   budget: the run fails with `budget_exceeded`, its results kept.
//! - A run that outlives its timeout fails with `timeout`; a cancel stops
//!   every running attempt ([`Action::Abort`]) and cancels the rest.
//! - After a takeover ([`Event::Resumed`]) the nodes that were running are
//!   run again with the same attempt number, so an outside effect keyed by
//!   (run, node, attempt) is applied once.

mod plan;
mod state;
mod step;

pub use plan::{ERROR_PORT, Plan, PlanNode, Role, Wire, catch_port};
pub use state::{
    CHECKPOINT_FIELD, Failure, Limits, LogLevel, LogLine, NodeRun, NodeStatus, RunError, RunState, RunStatus,
    Slot, Usage, WAITING_FIELD, Wait,
};
pub use step::{Action, Event, Step, TIMEOUT_S_GRACE_MS, Tick, main_input, step};
