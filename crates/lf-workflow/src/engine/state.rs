//! What a run is at one moment: its status over the results of its nodes.
//! This is exactly what the runner keeps in the database (a run row and
//! one row per slot), so a process that takes a run over rebuilds it from
//! the rows and goes on.

use std::collections::BTreeMap;

use lf_core::Timestamp;
use serde_json::{Value, json};

lf_core::word_enum!(
    /// A run's status.
    RunStatus, "status", [
        /// Queued, not yet claimed by a runner.
        Pending = "pending",
        Running = "running",
        Completed = "completed",
        Failed = "failed",
        Cancelled = "cancelled",
    ]
);

impl RunStatus {
    pub const fn is_final(self) -> bool {
        matches!(self, RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled)
    }
}

lf_core::word_enum!(
    /// A node result's status.
    NodeStatus, "status", [
        /// Not started: waiting for its inputs, or for a free slot.
        Pending = "pending",
        /// Started: an executor has it, or it waits on a durable timer.
        Running = "running",
        /// Failed and waiting for its next attempt.
        Retrying = "retrying",
        Completed = "completed",
        Failed = "failed",
        /// Not run: no connection into it was taken.
        Skipped = "skipped",
        /// Stopped or never started because the run ended.
        Cancelled = "cancelled",
    ]
);

impl NodeStatus {
    /// Whether nothing more will happen to it.
    pub const fn is_settled(self) -> bool {
        matches!(
            self,
            NodeStatus::Completed | NodeStatus::Failed | NodeStatus::Skipped | NodeStatus::Cancelled
        )
    }
}

/// One node's place in a run: the node's index in the plan, and for a
/// node in a loop's body, the item it runs for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    pub node: u32,
    pub item: Option<u32>,
}

impl Slot {
    pub const fn top(node: u32) -> Self {
        Slot { node, item: None }
    }
}

/// Why a node failed: a stable code (`timeout`, `provider_error`,
/// `rate_limit`, `connect_error`, `status_5xx`, `conflict`, `blocked`,
/// `invalid_input`, `budget_exceeded`, …) that retry rules name, and a
/// message a person can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub code: String,
    pub message: String,
}

impl Failure {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Failure { code: code.into(), message: message.into() }
    }

    /// The value a node's `error` output carries.
    pub fn to_value(&self, node_key: &str) -> Value {
        json!({"code": self.code, "message": self.message, "node": node_key})
    }
}

/// What a finished attempt used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub model_calls: u32,
    pub tokens: u64,
    pub credits: u64,
}

/// Why, and until when, a running attempt waits
/// ([`crate::engine::Event::NodeCheckpoint`]): for a person's decision,
/// say, checked again at `until` or when the run is woken
/// ([`crate::engine::Event::Woken`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wait {
    pub until: Timestamp,
    /// What it waits for, for a person: "approval of delete_lens".
    pub reason: String,
}

lf_core::word_enum!(
    /// How much a log line matters, as the server's own log ranks it.
    LogLevel, "level", [
        Debug = "debug",
        Info = "info",
        Warn = "warn",
        Error = "error",
    ]
);

/// A line a step wrote to its run's log (a `logger` step's filled
/// `message`), kept with the step's result so that whoever reads the run
/// sees it, whichever process ran the step. Its message holds no NUL,
/// which PostgreSQL's `text` cannot keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    pub level: LogLevel,
    pub message: String,
}

/// The field of a running node's `output` that holds what its attempt
/// saved of itself ([`NodeRun::checkpoint`]).
pub const CHECKPOINT_FIELD: &str = "checkpoint";
/// The field of a running node's `output` that says what it waits for
/// ([`NodeRun::waiting_for`]).
pub const WAITING_FIELD: &str = "waiting_for";

/// One node result.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRun {
    pub status: NodeStatus,
    /// The current or last attempt, from 1; 0 before the first.
    pub attempt: u32,
    /// Its resolved input (parameters merged with wired values).
    pub input: Option<Value>,
    pub output: Option<Value>,
    pub error: Option<Failure>,
    /// When its timer fires (a wait, or the next attempt).
    pub wake_at: Option<Timestamp>,
    pub started_at: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
    pub usage: Usage,
    /// What it wrote to the run's log when it completed.
    pub log: Option<LogLine>,
}

impl NodeRun {
    pub const fn pending() -> Self {
        NodeRun {
            status: NodeStatus::Pending,
            attempt: 0,
            input: None,
            output: None,
            error: None,
            wake_at: None,
            started_at: None,
            finished_at: None,
            usage: Usage { model_calls: 0, tokens: 0, credits: 0 },
            log: None,
        }
    }
}

impl NodeRun {
    /// What its attempt saved of itself (a checkpoint), while it has not
    /// settled: handed back to the attempt when it runs again (after a
    /// takeover, its timer, or a retry).
    pub fn checkpoint(&self) -> Option<&Value> {
        if self.status.is_settled() {
            return None;
        }
        self.output.as_ref()?.get(CHECKPOINT_FIELD)
    }

    /// What it waits for: an attempt that saved itself waiting (for a
    /// person's decision), until its timer fires or the run is woken.
    pub fn waiting_for(&self) -> Option<&str> {
        if self.status != NodeStatus::Running || self.wake_at.is_none() {
            return None;
        }
        self.output.as_ref()?.get(WAITING_FIELD)?.as_str()
    }
}

/// What bounds a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Nodes started at once (default 4).
    pub parallel: u32,
    /// Credits the run may spend; `None`: no limit.
    pub budget_credits: Option<u64>,
    /// How long the whole run may take, in milliseconds (default 10 min);
    /// a step that waits for a person adds its wait to it.
    pub run_timeout_ms: u64,
    /// How long one attempt may take when its config says nothing (60 s).
    pub node_timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { parallel: 4, budget_credits: None, run_timeout_ms: 600_000, node_timeout_ms: 60_000 }
    }
}

/// Why a run ended other than by completing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunError {
    /// `node_failed`, `budget_exceeded`, `timeout`, `cancelled`, `stopped`.
    pub code: String,
    pub message: String,
    /// The step it is about, when one is.
    pub node: Option<String>,
}

/// A run at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct RunState {
    pub status: RunStatus,
    pub inputs: Value,
    pub limits: Limits,
    pub slots: BTreeMap<Slot, NodeRun>,
    pub started_at: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
    /// The run's result: what its last steps output (or a stop step's).
    pub result: Option<Value>,
    pub error: Option<RunError>,
}

impl RunState {
    pub fn new(inputs: Value, limits: Limits) -> Self {
        RunState {
            status: RunStatus::Pending,
            inputs,
            limits,
            slots: BTreeMap::new(),
            started_at: None,
            finished_at: None,
            result: None,
            error: None,
        }
    }

    pub fn get(&self, s: Slot) -> Option<&NodeRun> {
        self.slots.get(&s)
    }

    /// The steps that wait (for a person's decision), and what for
    /// ([`NodeRun::waiting_for`]): the run has not ended, and does not go
    /// on past them until they are decided.
    pub fn waiting(&self) -> impl Iterator<Item = (Slot, &str)> {
        self.slots.iter().filter_map(|(s, n)| n.waiting_for().map(|w| (*s, w)))
    }

    /// What the run used so far.
    pub fn usage(&self) -> Usage {
        self.slots.values().fold(Usage::default(), |a, n| Usage {
            model_calls: a.model_calls + n.usage.model_calls,
            tokens: a.tokens + n.usage.tokens,
            credits: a.credits + n.usage.credits,
        })
    }

    /// When a runner that gives the run back must take it again: its
    /// earliest timer, or at once when an attempt was left running (it is
    /// run again by whoever takes the run). What stores keep as the run's
    /// `wake_at`.
    pub fn resume_at(&self) -> Option<Timestamp> {
        let left = self
            .slots
            .values()
            .filter(|n| n.status == NodeStatus::Running && n.wake_at.is_none())
            .filter_map(|n| n.started_at);
        self.next_wake().into_iter().chain(left).min()
    }

    /// The earliest timer: a wait, a retry, or the run's deadline.
    pub fn next_wake(&self) -> Option<Timestamp> {
        if self.status.is_final() {
            return None;
        }
        let deadline = self.started_at.map(|s| s.plus_micros(self.limits.run_timeout_ms as i64 * 1_000));
        self.slots.values().filter_map(|n| n.wake_at).chain(deadline).min()
    }
}
