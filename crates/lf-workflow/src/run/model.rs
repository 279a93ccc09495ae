//! Run records: who started a run of which version, with what, and where
//! it stands. The engine's [`RunState`] is the moving part; a [`Run`] adds
//! what never changes once the run is made.

use std::collections::BTreeMap;

use lf_core::{LenserId, LfError, LfResult, Timestamp, WorkflowId};

use crate::engine::{RunState, RunStatus};
use crate::model::{Workflow, WorkflowVersion, WorkflowVersionId};

lf_core::id_newtype!(
    /// One run of one workflow version.
    RunId
);

lf_core::id_newtype!(
    /// One claim of a run by a runner: a new token at every claim.
    LeaseToken
);

/// Longest `idempotency_key`.
pub const MAX_IDEMPOTENCY_KEY_CHARS: usize = 128;
/// How long an idempotency key names its run: a repeat within this time
/// gets the first run back; after it, the key starts a new run.
pub const IDEMPOTENCY_WINDOW_MICROS: i64 = 24 * 3_600 * 1_000_000;

/// A client's idempotency key: 1 to 128 characters, no control characters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    pub fn parse(field: &str, s: &str) -> LfResult<Self> {
        if s.is_empty()
            || s.chars().nth(MAX_IDEMPOTENCY_KEY_CHARS).is_some()
            || s.chars().any(char::is_control)
        {
            return Err(LfError::invalid_argument(format!(
                "{field} must be 1 to {MAX_IDEMPOTENCY_KEY_CHARS} characters without control characters, such as a request id"
            ))
            .with_field(field));
        }
        Ok(IdempotencyKey(s.to_owned()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

lf_core::word_enum!(
    /// What started a run.
    RunOrigin, "origin", [
        /// `run_workflow` (or a client's task).
        Manual = "manual",
        /// `retry_workflow`.
        Retry = "retry",
        Schedule = "schedule",
        Webhook = "webhook",
        Event = "event",
        /// A `sub_workflow` step of another run.
        SubWorkflow = "sub_workflow",
        /// A workflow contender answering a battle.
        Battle = "battle",
        /// `run_lens` with a `workflow_id`: a run that records one lens call.
        Lens = "lens",
        /// An agent's team run (lf-agent), started by the runner as the
        /// agent for its owner (the owner is its starter, the agent its
        /// `agent`), keyed `team:<agent id>:<team run id>`.
        Team = "team",
    ]
);

/// A run: what it was started with, and its state (without node results
/// unless they were asked for).
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub id: RunId,
    pub workflow_id: WorkflowId,
    /// The version it is pinned to.
    pub version_id: WorkflowVersionId,
    pub version: u32,
    /// The workflow's owner when the run was made (who may cancel and retry it, with the starter).
    pub workflow_owner: LenserId,
    pub started_by: LenserId,
    /// The AI Lenser that started it for `started_by`, its owner; `None`
    /// when a person, the service or a trigger of the workflow did.
    pub agent: Option<LenserId>,
    pub origin: RunOrigin,
    pub parent_run_id: Option<RunId>,
    /// The run whose end (a run event) started it.
    pub caused_by: Option<RunId>,
    /// The first run of its causal tree: the run it was caused by, or the
    /// sub-run's or team run's parent, leads up to it; a run nothing caused
    /// (a manual run, a retry, a schedule) is its own root.
    pub root_run_id: RunId,
    /// When its tree reached [`EventBounds::tree_max`] runs and the next
    /// follower was not started (set once, on the root).
    pub tree_full_at: Option<Timestamp>,
    pub idempotency_key: Option<IdempotencyKey>,
    /// Overrides the model of every AI step.
    pub global_model_id: Option<String>,
    /// For a retry with `resume: true`: the run whose completed steps it reuses.
    pub resume_from: Option<RunId>,
    pub created_at: Timestamp,
    /// Who asked to cancel it, while the runner has not yet stopped it.
    pub cancel_requested_by: Option<String>,
    pub state: RunState,
}

impl Run {
    /// A new run of `version` of `workflow`, made by `started_by` at
    /// `created_at` in `state`: no agent, parent, key, model override or
    /// resumed run.
    pub fn new(
        workflow: &Workflow,
        version: &WorkflowVersion,
        started_by: LenserId,
        origin: RunOrigin,
        created_at: Timestamp,
        state: RunState,
    ) -> Run {
        let id = RunId::new();
        Run {
            id,
            workflow_id: workflow.id,
            version_id: version.id,
            version: version.number,
            workflow_owner: workflow.owner,
            started_by,
            agent: None,
            origin,
            parent_run_id: None,
            caused_by: None,
            root_run_id: id,
            tree_full_at: None,
            idempotency_key: None,
            global_model_id: None,
            resume_from: None,
            created_at,
            cancel_requested_by: None,
            state,
        }
    }

    pub fn status(&self) -> RunStatus {
        self.state.status
    }

    /// Whether `who` may cancel or retry it: its starter and the workflow's owner.
    pub fn may_control(&self, who: LenserId) -> bool {
        who == self.started_by || who == self.workflow_owner
    }
}

/// What bounds the runs that events start ([`super::RunStore::create_caused`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventBounds {
    /// The most runs one root may cause in all, its tree's runs but itself.
    pub tree_max: u64,
    /// The most runs events may start for one lenser in any minute.
    pub per_minute: u64,
}

impl Default for EventBounds {
    fn default() -> Self {
        EventBounds { tree_max: 100, per_minute: 60 }
    }
}

/// What came of a run an event would start ([`super::RunStore::create_caused`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Caused {
    /// Made, or found by its idempotency key (`false`).
    Made(Box<Run>, bool),
    /// Its workflow already has a run in the tree: no cycle runs through it.
    InTree,
    /// The tree has [`EventBounds::tree_max`] runs; `first` when this skip
    /// is the one recorded on the root.
    TreeFull { first: bool },
    /// Its starter had [`EventBounds::per_minute`] runs started by events
    /// in the last minute.
    TooFast,
}

/// Which runs to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// The runs of this workflow (readable to the caller); `None`: the runs
    /// the caller started or whose workflow the caller owns.
    pub workflow_id: Option<WorkflowId>,
    pub status: Option<RunStatus>,
    /// Only the runs this lenser started ([`super::RunScope::started_by`]).
    pub started_by: Option<LenserId>,
}

/// A runner's hold on a run, until `expires_at`. Every write of the run's
/// state names the token; once another runner took the run, a write with
/// the old token is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub run: RunId,
    /// Who started the run: whose share of the runner's slots it takes.
    pub starter: LenserId,
    pub token: LeaseToken,
    pub owner: String,
    pub expires_at: Timestamp,
}

/// What one claim may take: up to `limit` due runs, in turns by starter
/// (each starter's oldest due run before anyone's second), and of each
/// starter's runs only as many as bring the runs of that starter this
/// process drives (`held`) to `share`. A run a `sub_workflow` step started
/// is taken past the share, first among its starter's: its parent waits
/// for it in a slot of its own, and holding it back could stall both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Room {
    pub limit: u32,
    pub share: u32,
    pub held: BTreeMap<LenserId, u32>,
}

impl Room {
    /// Up to `limit` runs, with no share per starter.
    pub fn up_to(limit: u32) -> Self {
        Room { limit, share: u32::MAX, held: BTreeMap::new() }
    }

    /// The turn of a starter's `nth` due run (from 1): after the runs of
    /// theirs this process drives.
    pub fn turn(&self, starter: LenserId, nth: u64) -> u64 {
        nth + u64::from(self.held.get(&starter).copied().unwrap_or(0))
    }

    /// The starters at their share: only their `sub_workflow` runs may be
    /// taken.
    pub fn full(&self) -> Vec<LenserId> {
        self.held.iter().filter(|&(_, n)| *n >= self.share).map(|(s, _)| *s).collect()
    }
}

/// What a heartbeat learns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Held {
    /// Still ours, extended; and whether someone asked to cancel the run.
    Yes { cancel_requested_by: Option<String> },
    /// Another runner has it, or it ended: stop and write nothing.
    Lost,
}
