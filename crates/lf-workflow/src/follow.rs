//! Event triggers: which workflows follow which domain events
//! ([`lf_core::EventKind`]), and what a run of one gets as its inputs.
//! The workflow store keeps a [`Follower`] per head that starts with an
//! `event_trigger`, written with the head as schedules are
//! ([`crate::WorkflowStore::followers`]).

use lf_core::{DomainEvent, EventKind, LenserId, WorkflowId};
use serde_json::Value;

use crate::model::{JsonObject, Visibility, Workflow, WorkflowVersion, WorkflowVersionId};
use crate::run::{Run, RunScope};

/// The node type that makes a workflow follow an event.
pub const EVENT_TRIGGER: &str = "event_trigger";

/// A workflow whose head follows an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Follower {
    pub workflow_id: WorkflowId,
    pub owner: LenserId,
    /// The head version it was read from.
    pub version_id: WorkflowVersionId,
    pub kind: EventKind,
}

impl Follower {
    /// The follower of a new head `version` of a workflow owned by `owner`:
    /// `None` when its trigger is not an `event_trigger` (or names no event
    /// this server has).
    pub fn for_head(owner: LenserId, version: &WorkflowVersion) -> Option<Follower> {
        let node = version.nodes.iter().find(|n| n.node_type.as_str() == EVENT_TRIGGER)?;
        let kind = ["event_type", "eventType"]
            .iter()
            .find_map(|k| node.config.get(*k).and_then(Value::as_str))
            .and_then(EventKind::from_word)?;
        Some(Follower { workflow_id: version.workflow_id, owner, version_id: version.id, kind })
    }

    /// Whether it hears `event`: its owner may see it, and it is not about
    /// one of this workflow's own runs (a workflow never starts itself).
    pub fn hears(&self, event: &DomainEvent) -> bool {
        event.kind == self.kind
            && event.visible_to(self.owner)
            && event.run.is_none_or(|(_, workflow)| workflow != self.workflow_id.as_uuid())
    }

    /// Whether it hears `event`, the end of `run` of `workflow`: as
    /// [`Follower::hears`], but whoever follows it hears it only if they
    /// may read the workflow and the run ([`RunScope`]): a run's event
    /// tells what the run did.
    pub fn hears_run(&self, event: &DomainEvent, workflow: &Workflow, run: &Run) -> bool {
        let reads = self.owner == workflow.owner
            || (workflow.visibility != Visibility::Private
                && RunScope::for_lenser(self.owner, workflow).covers(run));
        event.kind == self.kind && reads && run.workflow_id != self.workflow_id
    }
}

/// A run's inputs for `event`: `{event, <its fields>}`.
pub fn event_inputs(event: &DomainEvent) -> JsonObject {
    let mut m = JsonObject::new();
    m.insert("event".into(), Value::String(event.kind.as_str().to_owned()));
    for (k, v) in &event.fields {
        m.insert((*k).to_owned(), Value::String(v.clone()));
    }
    m
}
