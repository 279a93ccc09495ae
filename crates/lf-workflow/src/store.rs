//! The storage contract of workflows. Implementations:
//! [`crate::MemoryWorkflowStore`] here, SQLite and PostgreSQL in lf-store.
//! All of them run [`crate::contract::suite`].
//!
//! Runs, node results and their leases have a store trait of their own
//! ([`crate::run::RunStore`]): a run is pinned to a [`WorkflowVersionId`],
//! which this store keeps forever (versions are never deleted, and
//! archiving a workflow keeps them).

use async_trait::async_trait;
use lf_core::{EventKind, LfResult, Page, PageRequest, Reach, SearchQuery, Timestamp, WorkflowId};

use crate::follow::Follower;
use crate::model::{
    VersionSelector, VersionSummary, Workflow, WorkflowFilter, WorkflowPatch, WorkflowVersion,
    WorkflowVersionId,
};
use crate::schedule::ScheduleRow;

/// Where workflows and their versions live.
///
/// Visibility is the store's job: every read takes the caller's [`Reach`]
/// and applies it inside the query. With `Reach::Lenser(me)` a workflow is
/// *readable* (by id) when its owner is `me` or it is public or unlisted,
/// and *listed* when its owner is `me` or it is public: an unlisted
/// workflow is read by anyone who has its id and listed to its owner
/// only. `Reach::Everything` reads and lists every workflow. Archived
/// workflows stay readable by id; lists leave them out unless asked.
///
/// A version is stored whole: the version row, its nodes and its edges in
/// one transaction, and read back whole, nodes and edges in ordinal order,
/// every field as written (JSON objects with their key order, conditions,
/// picks, positions).
///
/// Errors every implementation MUST return (other failures are INTERNAL):
/// - NOT_FOUND where the workflow or version does not exist or is out of
///   the caller's reach: the same error in both cases, so "not yours to
///   read" cannot be told from "not there".
/// - CONFLICT from [`WorkflowStore::append_version`] when the head moved,
///   and from inserts when an id (or a version number of the workflow) is
///   already taken.
#[async_trait]
pub trait WorkflowStore: Send + Sync {
    /// Stores a new workflow and its first version (with its nodes and
    /// edges) in one transaction. `workflow.head_version_id` is `first.id`
    /// and `workflow.head_version` is `first.number` (1). CONFLICT if the
    /// workflow's, the version's, a node's or an edge's id is taken; then
    /// nothing is written.
    async fn create_workflow(&self, workflow: &Workflow, first: &WorkflowVersion) -> LfResult<()>;

    /// The workflow, archived or not. NOT_FOUND if missing or not readable.
    async fn get_workflow(&self, reach: Reach, id: WorkflowId) -> LfResult<Workflow>;

    /// A version of a readable workflow, with its nodes and edges.
    /// NOT_FOUND if the workflow is not readable or has no such version (a
    /// version of another workflow is not one of its versions).
    async fn get_version(
        &self,
        reach: Reach,
        id: WorkflowId,
        which: VersionSelector,
    ) -> LfResult<WorkflowVersion>;

    /// The workflow and one of its versions, as [`WorkflowStore::get_workflow`]
    /// then [`WorkflowStore::get_version`] would return them. A store may
    /// answer in one round trip; the default makes two.
    async fn get_workflow_and_version(
        &self,
        reach: Reach,
        id: WorkflowId,
        which: VersionSelector,
    ) -> LfResult<(Workflow, WorkflowVersion)> {
        let workflow = self.get_workflow(reach, id).await?;
        Ok((workflow, self.get_version(reach, id, which).await?))
    }

    /// Every version of a readable workflow, newest first, without graphs.
    async fn list_versions(&self, reach: Reach, id: WorkflowId) -> LfResult<Vec<VersionSummary>>;

    /// Listed workflows matching `filter`, newest first (`created_at`
    /// descending, then id descending); archived ones only with
    /// `include_archived`. `total` counts every match.
    async fn list_workflows(
        &self,
        reach: Reach,
        filter: &WorkflowFilter,
        page: PageRequest,
    ) -> LfResult<Page<Workflow>>;

    /// Listed workflows, archived ones left out, whose title or description
    /// contains every word of `query` (letters compared case-insensitively;
    /// on SQLite only ASCII letters fold), newest first. `total` counts
    /// every match.
    async fn search_workflows(
        &self,
        reach: Reach,
        query: &SearchQuery,
        page: PageRequest,
    ) -> LfResult<Page<Workflow>>;

    /// Adds `version` (numbered head + 1 by the caller) and makes it the
    /// head, if the head is still `expected_head`; applies `patch` in the
    /// same transaction. CONFLICT if the head moved or an id or the number
    /// is taken (nothing is written); NOT_FOUND if the workflow is missing.
    async fn append_version(
        &self,
        id: WorkflowId,
        expected_head: WorkflowVersionId,
        version: &WorkflowVersion,
        patch: &WorkflowPatch,
    ) -> LfResult<()>;

    /// Applies `patch` to the workflow. NOT_FOUND if it is missing.
    async fn update_workflow(&self, id: WorkflowId, patch: &WorkflowPatch) -> LfResult<()>;

    /// Workflows that are not archived and whose schedule's next tick is at
    /// or before `now`, earliest first, at most `limit`.
    ///
    /// The schedules are the store's to keep: [`WorkflowStore::create_workflow`]
    /// and [`WorkflowStore::append_version`] write, in their transaction,
    /// [`ScheduleRow::for_head`] of the new head at its `created_at` and
    /// its [`Follower::for_head`] (and remove them when the new head has
    /// neither).
    async fn due_schedules(&self, now: Timestamp, limit: u32) -> LfResult<Vec<ScheduleRow>>;

    /// Moves `row`'s schedule to the tick `to` (removes it with `None`: no
    /// tick left) if it still waits for `row.next_fire_at` from
    /// `row.version_id`. `false`, writing nothing: another scheduler moved
    /// it first, or a new head replaced it.
    async fn advance_schedule(&self, row: &ScheduleRow, to: Option<Timestamp>) -> LfResult<bool>;

    /// The earliest next tick of a workflow that is not archived.
    async fn next_schedule(&self) -> LfResult<Option<Timestamp>>;

    /// The workflows that are not archived and whose head follows `kind`
    /// ([`Follower::for_head`], kept with the head as schedules are).
    async fn followers(&self, kind: EventKind) -> LfResult<Vec<Follower>>;
}
