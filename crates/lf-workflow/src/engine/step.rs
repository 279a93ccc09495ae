//! The one function that moves a run on: given the run's state and what
//! just happened, it updates the state and says what to do next. It does
//! no I/O and reads no clock: the time and the jitter come in with the
//! event, so the same inputs always give the same decisions.

use std::collections::BTreeSet;

use lf_core::Timestamp;
use serde_json::{Map, Value, json};

use super::plan::{ERROR_PORT, Plan, Role, Wire};
use super::state::{
    CHECKPOINT_FIELD, Failure, Limits, LogLine, NodeRun, NodeStatus, RunError, RunState, RunStatus, Slot,
    Usage, WAITING_FIELD, Wait,
};
use crate::exec::combine;
use crate::model::MergeStrategy;
use crate::path::Pick;

mod advance;

/// The longest wait before a retry.
const MAX_BACKOFF_MS: u64 = 300_000;
/// The longest `wait_delay`: 7 days.
const MAX_WAIT_MS: u64 = 7 * 24 * 3_600_000;
/// What an attempt of a step with a `timeout_s` may take past it.
pub const TIMEOUT_S_GRACE_MS: u64 = 5_000;

/// What happened to a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A runner claimed it for the first time.
    Started,
    /// A runner took it over (after a restart or an expired lease): the
    /// nodes it finds running are run again, with the same attempt number
    /// and so the same idempotency key.
    Resumed,
    NodeFinished {
        slot: Slot,
        attempt: u32,
        output: Value,
        usage: Usage,
        /// The line the step wrote to the run's log, kept with its result.
        log: Option<LogLine>,
    },
    NodeFailed {
        slot: Slot,
        attempt: u32,
        failure: Failure,
        usage: Usage,
    },
    /// The attempt cannot go on before `until` (a rate limit's window is
    /// full): the same attempt runs again then, on a durable timer. Not a
    /// failure and not a retry: the attempt number stays, and with it the
    /// idempotency key.
    NodeDeferred {
        slot: Slot,
        attempt: u32,
        until: Timestamp,
    },
    /// The attempt saved where it is: `state` is kept (as the node's
    /// output's `checkpoint`) until the node ends and handed back to it
    /// when it runs again, and `usage` is what it used since its last save.
    /// With `wait`, it then waits: it stays running (no longer counted
    /// under the parallel bound), shows `wait.reason` as what it waits for,
    /// and the same attempt runs again at `wait.until` or when the run is
    /// woken ([`Event::Woken`]); the run's time limit grows by the wait.
    NodeCheckpoint {
        slot: Slot,
        attempt: u32,
        state: Value,
        usage: Usage,
        wait: Option<Wait>,
    },
    /// Something a waiting step waits for may have happened (a person
    /// decided): every waiting step runs again now.
    Woken,
    /// The clock reached the run's [`RunState::next_wake`].
    TimerFired,
    CancelAsked {
        by: String,
    },
    /// This process no longer holds the run: it must stop and write nothing.
    LeaseLost,
}

/// What the runner does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Start attempt `attempt` of the node at `slot` with `input`; an
    /// attempt that takes longer than `timeout_ms` fails with `timeout`.
    Run { slot: Slot, attempt: u32, input: Value, timeout_ms: u64 },
    /// Stop the attempt running at `slot` (its result will be ignored).
    Abort { slot: Slot },
    /// The run ended; write its final state.
    Finish { status: RunStatus },
    /// Drop the run without writing anything.
    Release,
}

/// One step's decisions, and the node results it changed (to be written).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Step {
    pub actions: Vec<Action>,
    pub changed: BTreeSet<Slot>,
}

/// The moment an event is handled, and 64 random bits for jitter.
#[derive(Clone, Copy, Debug)]
pub struct Tick {
    pub now: Timestamp,
    pub seed: u64,
}

/// Applies `event` to `state` and decides what follows.
pub fn step(plan: &Plan, state: &mut RunState, event: Event, tick: Tick) -> Step {
    let mut m = Mover { plan, state, tick, out: Step::default() };
    if m.state.status.is_final() {
        return m.out;
    }
    match event {
        // Started twice is resumed: only a pending run starts.
        Event::Started | Event::Resumed => {
            if m.state.status == RunStatus::Pending {
                m.start();
            } else {
                m.rerun_started();
            }
        }
        Event::NodeFinished { slot, attempt, output, usage, log } => {
            m.finished(slot, attempt, output, usage, log)
        }
        Event::NodeFailed { slot, attempt, failure, usage } => m.failed(slot, attempt, failure, usage),
        Event::NodeDeferred { slot, attempt, until } => m.deferred(slot, attempt, until),
        Event::NodeCheckpoint { slot, attempt, state, usage, wait } => {
            m.checkpoint(slot, attempt, state, usage, wait)
        }
        Event::Woken => {
            m.wake_waiting();
            m.timers();
        }
        Event::TimerFired => m.timers(),
        Event::CancelAsked { by } => {
            let e = RunError { code: "cancelled".into(), message: format!("cancelled by {by}"), node: None };
            m.end(RunStatus::Cancelled, None, Some(e));
        }
        Event::LeaseLost => {
            m.out.actions.push(Action::Release);
            return m.out;
        }
    }
    if m.state.status == RunStatus::Running {
        m.advance();
    }
    m.out
}

struct Mover<'a> {
    plan: &'a Plan,
    state: &'a mut RunState,
    tick: Tick,
    out: Step,
}

enum Readiness {
    Waiting,
    Skip,
    Ready(Value),
}

impl Mover<'_> {
    fn now(&self) -> Timestamp {
        self.tick.now
    }

    fn set(&mut self, slot: Slot, f: impl FnOnce(&mut NodeRun)) {
        let n = self.state.slots.entry(slot).or_insert_with(NodeRun::pending);
        f(n);
        self.out.changed.insert(slot);
    }

    fn status(&self, slot: Slot) -> Option<NodeStatus> {
        self.state.get(slot).map(|n| n.status)
    }

    fn start(&mut self) {
        let now = self.now();
        self.state.status = RunStatus::Running;
        self.state.started_at = Some(now);
        for i in 0..self.plan.nodes.len() as u32 {
            if self.plan.node(i).in_loop.is_none() {
                self.set(Slot::top(i), |_| {});
            }
        }
        let inputs = self.state.inputs.clone();
        self.set(Slot::top(self.plan.trigger), |n| {
            n.status = NodeStatus::Completed;
            n.attempt = 1;
            n.input = Some(inputs.clone());
            n.output = Some(inputs);
            n.started_at = Some(now);
            n.finished_at = Some(now);
        });
    }

    fn rerun_started(&mut self) {
        let again: Vec<(Slot, u32, Value)> = self
            .state
            .slots
            .iter()
            // A deferred attempt runs again when its timer fires.
            .filter(|(s, n)| {
                n.status == NodeStatus::Running
                    && n.wake_at.is_none()
                    && self.plan.node(s.node).role.is_executed()
            })
            .map(|(s, n)| (*s, n.attempt, n.input.clone().unwrap_or(Value::Null)))
            .collect();
        for (slot, attempt, input) in again {
            let timeout_ms = self.timeout_ms(slot);
            self.out.actions.push(Action::Run { slot, attempt, input, timeout_ms });
        }
    }

    fn finished(&mut self, slot: Slot, attempt: u32, output: Value, usage: Usage, log: Option<LogLine>) {
        if !self.is_current(slot, attempt) {
            return;
        }
        let now = self.now();
        self.set(slot, |n| {
            n.status = NodeStatus::Completed;
            n.output = Some(output.clone());
            n.error = None;
            n.finished_at = Some(now);
            add_usage(&mut n.usage, usage);
            n.log = log;
        });
        let node = self.plan.node(slot.node);
        match node.role {
            Role::Stop => {
                let failed = node.config.get("status").and_then(Value::as_str) == Some("failed");
                if failed {
                    let e = RunError {
                        code: "stopped".into(),
                        message: format!("step {} ended the run as failed", node.key),
                        node: Some(node.key.clone()),
                    };
                    self.end(RunStatus::Failed, Some(output), Some(e));
                } else {
                    self.end(RunStatus::Completed, Some(output), None);
                }
            }
            Role::Catch if node.config.get("continue_on_error") == Some(&Value::Bool(false)) => {
                let input = self.state.get(slot).and_then(|n| n.input.clone()).unwrap_or_default();
                let caught = main_input(&input);
                let message =
                    caught.get("message").and_then(Value::as_str).unwrap_or("a step failed").to_owned();
                let from = caught.get("node").and_then(Value::as_str).map(str::to_owned);
                let e = RunError {
                    code: "node_failed".into(),
                    message: format!("step {} caught an error and ends the run: {message}", node.key),
                    node: from,
                };
                self.end(RunStatus::Failed, None, Some(e));
            }
            _ => {}
        }
    }

    fn failed(&mut self, slot: Slot, attempt: u32, failure: Failure, usage: Usage) {
        if !self.is_current(slot, attempt) {
            return;
        }
        let node = self.plan.node(slot.node);
        let retry = node.retry;
        let now = self.now();
        if attempt < retry.max_attempts && retry.retry_on.contains(&failure.code.as_str()) {
            let base = retry.backoff_ms.saturating_mul(1 << (attempt - 1).min(20)).min(MAX_BACKOFF_MS);
            // ±25 %, so that many runs failing together do not retry together.
            let delay = base * (75 + self.tick.seed % 51) / 100;
            self.set(slot, |n| {
                n.status = NodeStatus::Retrying;
                n.error = Some(failure);
                n.wake_at = Some(now.plus_micros(delay as i64 * 1_000));
                add_usage(&mut n.usage, usage);
            });
            return;
        }
        self.set(slot, |n| {
            n.status = NodeStatus::Failed;
            n.error = Some(failure.clone());
            n.finished_at = Some(now);
            add_usage(&mut n.usage, usage);
        });
        self.handle_failure(slot, failure);
    }

    /// The attempt asked to run again at `until`: it stays running (it
    /// keeps its place under the parallel bound) with a timer.
    fn deferred(&mut self, slot: Slot, attempt: u32, until: Timestamp) {
        if !self.is_current(slot, attempt) {
            return;
        }
        let at = until.max(self.now());
        self.set(slot, |n| n.wake_at = Some(at));
    }

    /// The attempt saved `state` (and, with `wait`, waits).
    fn checkpoint(&mut self, slot: Slot, attempt: u32, state: Value, usage: Usage, wait: Option<Wait>) {
        if !self.is_current(slot, attempt) {
            return;
        }
        let now = self.now();
        let mut kept = Map::new();
        kept.insert(CHECKPOINT_FIELD.into(), state);
        let mut wake = None;
        if let Some(w) = wait {
            let until = w.until.max(now);
            let waited_ms = (until.as_micros() - now.as_micros()).max(0) as u64 / 1_000;
            self.state.limits.run_timeout_ms = self.state.limits.run_timeout_ms.saturating_add(waited_ms);
            kept.insert(WAITING_FIELD.into(), Value::String(w.reason));
            wake = Some(until);
        }
        self.set(slot, |n| {
            n.output = Some(Value::Object(kept));
            n.wake_at = wake;
            add_usage(&mut n.usage, usage);
        });
    }

    /// Makes every waiting step due now.
    fn wake_waiting(&mut self) {
        let now = self.now();
        let waiting: Vec<Slot> = self.state.waiting().map(|(s, _)| s).collect();
        for slot in waiting {
            self.set(slot, |n| n.wake_at = Some(now));
        }
    }

    /// A node failed for good: its `error` output, an enclosing loop, a
    /// try step or, failing those, the run takes the failure.
    fn handle_failure(&mut self, slot: Slot, failure: Failure) {
        let plan = self.plan;
        let node = plan.node(slot.node);
        if plan.catches_error[slot.node as usize] {
            return;
        }
        if let (Some(item), Some(l)) = (slot.item, node.in_loop) {
            // The loop fails: no other item goes on.
            let (body, _) = plan.body(l);
            for s in self
                .state
                .slots
                .keys()
                .copied()
                .filter(|s| s.item.is_some() && body.contains(&s.node))
                .collect::<Vec<_>>()
            {
                self.settle(s, NodeStatus::Cancelled);
            }
            let wrapped = Failure::new(
                failure.code.clone(),
                format!("item {item}: step {} failed: {}", node.key, failure.message),
            );
            let now = self.now();
            let loop_slot = Slot::top(l);
            self.set(loop_slot, |n| {
                n.status = NodeStatus::Failed;
                n.error = Some(wrapped.clone());
                n.finished_at = Some(now);
            });
            return self.handle_failure(loop_slot, wrapped);
        }
        if let Some(&t) = node.guarded_by.first() {
            let caught = failure.to_value(&node.key);
            let port = super::plan::catch_port(plan.node(t));
            self.set(Slot::top(t), |n| {
                if let Some(Value::Object(o)) = &mut n.output {
                    o.insert(port, caught);
                }
            });
            for &s in plan.scope(t) {
                self.settle(Slot::top(s), NodeStatus::Cancelled);
            }
            return;
        }
        let e = RunError {
            code: "node_failed".into(),
            message: format!("step {} failed: {}", node.key, failure.message),
            node: Some(node.key.clone()),
        };
        self.end(RunStatus::Failed, None, Some(e));
    }

    /// Ends what has not ended at `slot`: stops a running attempt, and
    /// marks it `to`.
    fn settle(&mut self, slot: Slot, to: NodeStatus) {
        let Some(st) = self.status(slot) else { return };
        if st.is_settled() {
            return;
        }
        if st == NodeStatus::Running && self.plan.node(slot.node).role.is_executed() {
            self.out.actions.push(Action::Abort { slot });
        }
        let now = self.now();
        self.set(slot, |n| {
            n.status = to;
            n.wake_at = None;
            n.finished_at = Some(now);
        });
    }

    fn timers(&mut self) {
        let now = self.now();
        if let Some(s) = self.state.started_at
            && now >= s.plus_micros(self.state.limits.run_timeout_ms as i64 * 1_000)
        {
            let e = RunError {
                code: "timeout".into(),
                message: format!(
                    "the run took longer than its limit of {} ms",
                    self.state.limits.run_timeout_ms
                ),
                node: None,
            };
            return self.end(RunStatus::Failed, None, Some(e));
        }
        let due: Vec<(Slot, NodeStatus)> = self
            .state
            .slots
            .iter()
            .filter(|(_, n)| n.wake_at.is_some_and(|w| w <= now))
            .map(|(s, n)| (*s, n.status))
            .collect();
        for (slot, status) in due {
            match status {
                NodeStatus::Running if self.plan.node(slot.node).role.is_executed() => {
                    // A deferred or waiting attempt's time has come: the
                    // same attempt again (no longer waiting while it runs).
                    let n = self.state.get(slot);
                    let (attempt, input) =
                        n.map_or((1, Value::Null), |n| (n.attempt, n.input.clone().unwrap_or(Value::Null)));
                    let timeout_ms = self.timeout_ms(slot);
                    self.set(slot, |n| {
                        n.wake_at = None;
                        if let Some(Value::Object(o)) = &mut n.output {
                            o.remove(WAITING_FIELD);
                        }
                    });
                    self.out.actions.push(Action::Run { slot, attempt, input, timeout_ms });
                }
                NodeStatus::Running => {
                    // A wait is over: its input flows on.
                    self.set(slot, |n| {
                        n.status = NodeStatus::Completed;
                        n.output = n.input.as_ref().map(|i| main_input(i).clone());
                        n.wake_at = None;
                        n.finished_at = Some(now);
                    });
                }
                NodeStatus::Retrying => {
                    // Started again by advance, within the parallel bound.
                    self.set(slot, |n| {
                        n.status = NodeStatus::Pending;
                        n.wake_at = None;
                    });
                }
                _ => {}
            }
        }
    }

    fn end(&mut self, status: RunStatus, result: Option<Value>, error: Option<RunError>) {
        let open: Vec<(Slot, NodeStatus)> = self
            .state
            .slots
            .iter()
            .filter(|(_, n)| !n.status.is_settled())
            .map(|(s, n)| (*s, n.status))
            .collect();
        for (slot, st) in open {
            let to = if st == NodeStatus::Pending && status != RunStatus::Cancelled {
                NodeStatus::Skipped
            } else {
                NodeStatus::Cancelled
            };
            self.settle(slot, to);
        }
        self.state.status = status;
        self.state.finished_at = Some(self.now());
        self.state.result = result;
        self.state.error = error;
        self.out.actions.push(Action::Finish { status });
    }

    fn is_current(&self, slot: Slot, attempt: u32) -> bool {
        self.state.get(slot).is_some_and(|n| n.status == NodeStatus::Running && n.attempt == attempt)
    }

    /// How long one attempt of the node may take: its config's
    /// `timeout_ms`, or its `timeout_s` and [`TIMEOUT_S_GRACE_MS`] more (a
    /// step with a time cap of its own stops itself at it, and is given
    /// the time to say so), else the run's node timeout.
    fn timeout_ms(&self, slot: Slot) -> u64 {
        let config = &self.plan.node(slot.node).config;
        if let Some(ms) = config.get("timeout_ms").and_then(Value::as_u64) {
            return ms;
        }
        match config.get("timeout_s").and_then(Value::as_u64) {
            Some(s) => s.saturating_mul(1_000).saturating_add(TIMEOUT_S_GRACE_MS),
            None => self.state.limits.node_timeout_ms,
        }
    }

    /// The executed attempts that hold a place under the parallel bound
    /// (running, or deferred; not waiting for a person).
    fn running(&self) -> usize {
        self.state
            .slots
            .iter()
            .filter(|(s, n)| {
                n.status == NodeStatus::Running
                    && n.waiting_for().is_none()
                    && self.plan.node(s.node).role.is_executed()
            })
            .count()
    }
}

fn add_usage(to: &mut Usage, u: Usage) {
    to.model_calls += u.model_calls;
    to.tokens += u.tokens;
    to.credits += u.credits;
}

/// A node's main input: its `input` parameter, or the only one it has.
pub fn main_input(inputs: &Value) -> &Value {
    match inputs {
        Value::Object(o) if o.contains_key("input") => &o["input"],
        Value::Object(o) if o.len() == 1 => o.values().next().unwrap_or(inputs),
        _ => inputs,
    }
}
