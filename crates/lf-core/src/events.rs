//! Domain events: what happened that workflows can follow (their
//! `event_trigger`). A domain service that makes one hands it to an
//! [`EventSink`] after its write succeeded; the composition root decides
//! who hears it (the workflow runner's event triggers in the servers).
//! Delivery is in process and after the fact: an event of a write whose
//! process dies before `publish` returns is not heard.

use crate::id::LenserId;

crate::word_enum!(
    /// The events a workflow's `event_trigger` can follow.
    EventKind, "event_type", [
        LensCreated = "lens.created",
        LensUpdated = "lens.updated",
        LensLabelMoved = "lens.label_moved",
        BattleClosed = "battle.closed",
        WorkflowRunCompleted = "workflow.run.completed",
        WorkflowRunFailed = "workflow.run.failed",
    ]
);

/// One event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainEvent {
    /// Unique per event: a workflow starts one run per event it hears.
    pub id: uuid::Uuid,
    pub kind: EventKind,
    /// The owner of what it is about (the lens, the battle's creator, the
    /// run's workflow): who may see it, with everyone when `public`. A run
    /// event leaves `public` false: whether others may read the run is
    /// read by the sink when others follow it.
    pub owner: LenserId,
    pub public: bool,
    /// What it is about, by field name: a run's inputs, with `event`.
    pub fields: Vec<(&'static str, String)>,
    /// For a run event: the run that ended, and the workflow it ran (a
    /// workflow does not hear its own runs, and chains of runs started by
    /// run events are bounded).
    pub run: Option<(uuid::Uuid, uuid::Uuid)>,
}

impl DomainEvent {
    pub fn new(kind: EventKind, owner: LenserId, public: bool) -> Self {
        DomainEvent { id: uuid::Uuid::now_v7(), kind, owner, public, fields: Vec::new(), run: None }
    }

    pub fn with(mut self, field: &'static str, value: impl Into<String>) -> Self {
        self.fields.push((field, value.into()));
        self
    }

    /// Whether `who` may see it.
    pub fn visible_to(&self, who: LenserId) -> bool {
        self.public || self.owner == who
    }
}

/// Hears domain events.
///
/// Contract: `publish` returns at once (it may hand the event to
/// background work) and never fails the write that made the event.
pub trait EventSink: Send + Sync {
    fn publish(&self, event: DomainEvent);
}

/// An [`EventSink`] that hears nothing: a service's default.
pub struct NoEvents;

impl EventSink for NoEvents {
    fn publish(&self, _: DomainEvent) {}
}
