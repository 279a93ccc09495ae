//! Team runs: a workflow run on an agent's behalf, and the events that tell
//! its course. How a team run moves is [`crate::team`].

use lf_core::{LenserId, LfError, LfResult, RunId, Timestamp, WorkflowId, clip};
use serde_json::{Map, Value};

lf_core::id_newtype!(
    /// A team run.
    TeamRunId
);
lf_core::id_newtype!(
    /// One event of a team run.
    TeamEventId
);

lf_core::word_enum!(
    /// Whether a team run waits for a person before it is dispatched.
    DelegationPolicy, "policy", [
        /// Dispatched at once.
        Auto = "auto",
        /// Waits until an owner approves it (`decide_agent_approval`).
        ApprovalRequired = "approval_required",
    ]
);

lf_core::word_enum!(
    /// Where a team run is. The original called the approval wait
    /// `blocked`; here it says what it waits for.
    TeamRunStatus, "status", [
        /// Waiting for the runner to start its workflow run.
        Queued = "queued",
        /// Waiting for an owner's approval.
        AwaitingApproval = "awaiting_approval",
        /// Its workflow run is running.
        Running = "running",
        /// Its workflow run completed.
        Completed = "completed",
        /// Its workflow run failed, or could not start.
        Failed = "failed",
        /// Someone cancelled it before it finished.
        Cancelled = "cancelled",
        /// An owner refused to approve it; it never ran.
        Rejected = "rejected",
    ]
);

impl TeamRunStatus {
    /// Whether nothing moves it any more.
    pub const fn is_finished(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled | Self::Rejected)
    }
}

/// A team run's inputs: the JSON object its workflow run starts with, at
/// most 64 KiB as JSON text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TeamInputs(Map<String, Value>);

impl TeamInputs {
    /// Most bytes of the inputs as JSON text.
    pub const MAX_BYTES: usize = 64 * 1024;

    /// INVALID_ARGUMENT (field `inputs`) when larger than 64 KiB as JSON.
    pub fn new(inputs: Map<String, Value>) -> LfResult<TeamInputs> {
        let size = serde_json::to_string(&inputs).map_or(usize::MAX, |s| s.len());
        if size > Self::MAX_BYTES {
            return Err(LfError::invalid_argument(format!(
                "inputs must be at most {} bytes as JSON, got {size}: pass references (ids, URLs) instead of the data.",
                Self::MAX_BYTES
            ))
            .with_field("inputs"));
        }
        Ok(TeamInputs(inputs))
    }

    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }
}

lf_core::text_newtype!(
    /// Why an approval was decided or a run cancelled: 1 to 500 characters
    /// after trimming.
    Reason, "reason", 1, 500, trim = true
);

/// An owner's answer to an approval request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub approved: bool,
    pub by: Option<LenserId>,
    pub reason: Option<String>,
    pub at: Timestamp,
}

/// A workflow run on an agent's behalf.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamRun {
    pub id: TeamRunId,
    pub agent: LenserId,
    pub workflow_id: WorkflowId,
    /// Its workflow run, once dispatched.
    pub workflow_run: Option<RunId>,
    pub inputs: TeamInputs,
    pub policy: DelegationPolicy,
    pub status: TeamRunStatus,
    /// The team run that started this one, when nested.
    pub parent: Option<TeamRunId>,
    /// 0 for a team run started from outside, its parent's depth + 1
    /// otherwise; at most [`TeamRun::MAX_DEPTH`].
    pub depth: u8,
    /// Who started it (`None`: the service acting as nobody).
    pub started_by: Option<LenserId>,
    /// The approval decision, once made.
    pub decision: Option<Decision>,
    /// Why it failed, or who cancelled it and why.
    pub error: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub finished_at: Option<Timestamp>,
}

impl TeamRun {
    /// The deepest nesting of team runs.
    pub const MAX_DEPTH: u8 = 8;
}

lf_core::word_enum!(
    /// What happened in a team run.
    TeamEventKind, "event_type", [
        /// Queued for the runner.
        DispatchQueued = "dispatch_queued",
        /// Waiting for an owner's approval.
        ApprovalRequested = "approval_requested",
        /// An owner approved it.
        ApprovalGranted = "approval_granted",
        /// An owner refused it.
        ApprovalRejected = "approval_rejected",
        /// Its workflow run started.
        DispatchStarted = "dispatch_started",
        /// A step started.
        NodeStarted = "node_started",
        /// A step completed.
        NodeCompleted = "node_completed",
        /// A step failed.
        NodeFailed = "node_failed",
        /// The agent called a tool.
        ToolCalled = "tool_called",
        /// The run completed.
        Completed = "completed",
        /// The run failed.
        Failed = "failed",
        /// Someone cancelled the run.
        RunCancelled = "run_cancelled",
    ]
);

/// What an event says besides its kind. Events are written by the runner
/// and the service, not typed by clients: over-long text is cut, never
/// refused.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventDetail {
    /// Who caused it (the approver, the canceller).
    pub actor: Option<LenserId>,
    /// The workflow run (`dispatch_started`).
    pub run: Option<RunId>,
    /// The step's key (node events, a step's tool call).
    pub node: Option<String>,
    /// The tool called (`tool_called`).
    pub tool: Option<String>,
    /// A reason, an error, a tool call's outcome: at most 2,000 characters.
    pub note: Option<String>,
}

impl EventDetail {
    /// Most characters of a node key or tool name kept.
    pub const MAX_NAME_CHARS: usize = 200;
    /// Most characters of a note kept.
    pub const MAX_NOTE_CHARS: usize = 2_000;

    /// A detail with this note.
    pub fn note(note: impl AsRef<str>) -> Self {
        EventDetail::default().with_note(note)
    }
    pub fn with_note(mut self, note: impl AsRef<str>) -> Self {
        self.note = Some(cut(note.as_ref(), Self::MAX_NOTE_CHARS));
        self
    }
    pub fn with_node(mut self, node: impl AsRef<str>) -> Self {
        self.node = Some(cut(node.as_ref(), Self::MAX_NAME_CHARS));
        self
    }
    pub fn with_tool(mut self, tool: impl AsRef<str>) -> Self {
        self.tool = Some(cut(tool.as_ref(), Self::MAX_NAME_CHARS));
        self
    }
    pub fn with_actor(mut self, actor: Option<LenserId>) -> Self {
        self.actor = actor;
        self
    }
    pub fn with_run(mut self, run: RunId) -> Self {
        self.run = Some(run);
        self
    }
}

fn cut(s: &str, max: usize) -> String {
    clip(&s.replace('\0', ""), max).into_owned()
}

/// An event to append; the store numbers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEvent {
    pub kind: TeamEventKind,
    pub detail: EventDetail,
}

/// One event of a team run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamEvent {
    pub id: TeamEventId,
    pub team_run: TeamRunId,
    pub agent: LenserId,
    /// 1 for a team run's first event, then one more for each.
    pub seq: u32,
    pub kind: TeamEventKind,
    pub detail: EventDetail,
    /// Never before the team run's previous event.
    pub at: Timestamp,
}

/// A team run as a write left it, with the events the write appended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamRunUpdate {
    pub run: TeamRun,
    pub events: Vec<TeamEvent>,
}

/// Which events of an agent's team runs a listing shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventFilter {
    /// Only this team run's.
    pub team_run: Option<TeamRunId>,
    /// Only events of this kind.
    pub kind: Option<TeamEventKind>,
}

/// Which of an agent's team runs a listing shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TeamRunFilter {
    pub status: Option<TeamRunStatus>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_bounded() {
        let mut m = Map::new();
        m.insert("text".into(), Value::String("x".repeat(TeamInputs::MAX_BYTES)));
        assert_eq!(TeamInputs::new(m).unwrap_err().details()[0].0, "field");
        let mut m = Map::new();
        m.insert("topic".into(), Value::String("rust".into()));
        assert_eq!(TeamInputs::new(m.clone()).unwrap().as_map(), &m);
    }

    #[test]
    fn details_are_cut() {
        let d = EventDetail::note("x".repeat(5_000)).with_node("n\0".repeat(300));
        assert_eq!(d.note.unwrap().chars().count(), EventDetail::MAX_NOTE_CHARS + 1);
        assert!(!d.node.unwrap().contains('\0'));
    }

    #[test]
    fn finished_statuses() {
        use TeamRunStatus::*;
        let finished: Vec<_> = TeamRunStatus::ALL.iter().filter(|s| s.is_finished()).collect();
        assert_eq!(finished, [&Completed, &Failed, &Cancelled, &Rejected]);
    }
}
