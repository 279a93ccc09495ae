//! Who reads which runs: one rule for every path that answers with a run
//! or what it did (a run by id, its logs, a listing, a task, the event of
//! its end, a repeated idempotency key) and for who may cancel or retry one.
//!
//! A run holds what its starter handed it and what their connections
//! fetched, so reading a workflow is not reading its runs. A run is its
//! starter's and its workflow owner's; any other reader of the workflow
//! reads only the runs they started, unless the owner opted the workflow
//! in to public runs ([`crate::Workflow::public_runs`]). The Service
//! principal, the local operator, reads every run. Whether the workflow
//! itself is readable is the workflow store's question, asked first.

use lf_core::{LenserId, Principal, Reach};

use super::model::Run;
use crate::model::Workflow;

/// Which runs of one workflow a reader of it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunScope {
    /// Every run: its owner, the Service principal, or anyone when the
    /// workflow has public runs.
    Every,
    /// Only the runs this lenser started.
    StartedBy(LenserId),
}

impl RunScope {
    /// What `p`, who may read `workflow`, reads of its runs. An agent
    /// reads what its owner does.
    pub fn of(p: &Principal, workflow: &Workflow) -> RunScope {
        match p.reach() {
            Reach::Everything => RunScope::Every,
            Reach::Lenser(me) => RunScope::for_lenser(me, workflow),
        }
    }

    /// What lenser `who`, who may read `workflow`, reads of its runs.
    pub fn for_lenser(who: LenserId, workflow: &Workflow) -> RunScope {
        if who == workflow.owner || workflow.public_runs { RunScope::Every } else { RunScope::StartedBy(who) }
    }

    /// Whether `run`, a run of the workflow, is in the scope.
    pub fn covers(&self, run: &Run) -> bool {
        match self {
            RunScope::Every => true,
            RunScope::StartedBy(me) => run.started_by == *me,
        }
    }

    /// The starter a listing of the workflow's runs is limited to, in its
    /// query; `None`: every run.
    pub fn started_by(&self) -> Option<LenserId> {
        match self {
            RunScope::Every => None,
            RunScope::StartedBy(me) => Some(*me),
        }
    }
}

#[cfg(test)]
mod tests {
    use lf_core::{Scopes, Timestamp, WorkflowId};

    use super::*;
    use crate::model::{Title, Visibility, WorkflowVersionId};

    fn workflow(owner: LenserId, public_runs: bool) -> Workflow {
        let t = Timestamp::from_micros(0);
        Workflow {
            id: WorkflowId::new(),
            owner,
            title: Title::parse("W").unwrap(),
            description: None,
            visibility: Visibility::Public,
            public_runs,
            head_version_id: WorkflowVersionId::new(),
            head_version: 1,
            created_at: t,
            updated_at: t,
            archived_at: None,
            agent: None,
        }
    }

    #[test]
    fn a_run_is_its_starters_and_its_owners() {
        let (owner, starter, reader) = (LenserId::new(), LenserId::new(), LenserId::new());
        let w = workflow(owner, false);
        let lenser = |id| Principal::Lenser { id, scopes: Scopes::READ_WRITE };
        assert_eq!(RunScope::of(&lenser(owner), &w), RunScope::Every);
        assert_eq!(RunScope::of(&Principal::Service { acting_as: Some(reader) }, &w), RunScope::Every);
        assert_eq!(RunScope::of(&lenser(reader), &w), RunScope::StartedBy(reader));
        let agent = Principal::Agent { agent_id: LenserId::new(), owner: starter };
        assert_eq!(RunScope::of(&agent, &w), RunScope::StartedBy(starter), "an agent reads as its owner");
        assert_eq!(RunScope::of(&lenser(reader), &workflow(owner, true)), RunScope::Every, "public runs");
        assert_eq!(RunScope::StartedBy(reader).started_by(), Some(reader));
        assert_eq!(RunScope::Every.started_by(), None);
    }
}
