//! [`WorkflowStore`] over either backend: the tables of
//! `0007_workflows.sql` (SQLite) and `0006_workflows.sql` (PostgreSQL),
//! through the statements of `sql`, the same on both. Creating a workflow
//! and appending a version run in one write transaction each (a version is
//! its row, its nodes and its edges), reading a version in one read
//! snapshot, other reads and updates as one statement each (see
//! [`crate::conns`]).

pub(crate) mod rows;
pub(crate) mod sql;
mod triggers;

use async_trait::async_trait;
use lf_core::EventKind;
use lf_core::{LfResult, Page, PageRequest, Reach, SearchQuery, Timestamp, WorkflowId};
use lf_workflow::follow::Follower;
use lf_workflow::schedule::ScheduleRow;
use lf_workflow::{
    VersionSelector, VersionSummary, Workflow, WorkflowFilter, WorkflowPatch, WorkflowStore, WorkflowVersion,
    WorkflowVersionId,
};

use self::sql::Listing;
use crate::conns::{Conns, on};

/// [`WorkflowStore`] over either backend.
pub(crate) struct SqlWorkflowStore {
    conns: Conns,
}

impl SqlWorkflowStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

#[async_trait]
impl WorkflowStore for SqlWorkflowStore {
    async fn create_workflow(&self, workflow: &Workflow, first: &WorkflowVersion) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::create_workflow(conn, workflow, first))
    }

    async fn get_workflow(&self, reach: Reach, id: WorkflowId) -> LfResult<Workflow> {
        on!(&self.conns, reading, |conn| sql::get_workflow(conn, reach, id))
    }

    async fn get_version(
        &self,
        reach: Reach,
        id: WorkflowId,
        which: VersionSelector,
    ) -> LfResult<WorkflowVersion> {
        // One query serves both: the workflow's columns are a few bytes
        // next to the graph.
        self.get_workflow_and_version(reach, id, which).await.map(|(_, version)| version)
    }

    async fn get_workflow_and_version(
        &self,
        reach: Reach,
        id: WorkflowId,
        which: VersionSelector,
    ) -> LfResult<(Workflow, WorkflowVersion)> {
        on!(&self.conns, snapshot, |conn| sql::get_workflow_and_version(conn, reach, id, which))
    }

    async fn list_versions(&self, reach: Reach, id: WorkflowId) -> LfResult<Vec<VersionSummary>> {
        on!(&self.conns, reading, |conn| sql::list_versions(conn, reach, id))
    }

    async fn list_workflows(
        &self,
        reach: Reach,
        filter: &WorkflowFilter,
        page: PageRequest,
    ) -> LfResult<Page<Workflow>> {
        on!(&self.conns, reading, |conn| sql::list_workflows(conn, reach, Listing::List(filter), page))
    }

    async fn search_workflows(
        &self,
        reach: Reach,
        query: &SearchQuery,
        page: PageRequest,
    ) -> LfResult<Page<Workflow>> {
        on!(&self.conns, reading, |conn| sql::list_workflows(conn, reach, Listing::Search(query), page))
    }

    async fn append_version(
        &self,
        id: WorkflowId,
        expected_head: WorkflowVersionId,
        version: &WorkflowVersion,
        patch: &WorkflowPatch,
    ) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::append_version(conn, id, expected_head, version, patch))
    }

    async fn update_workflow(&self, id: WorkflowId, patch: &WorkflowPatch) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::update_workflow(conn, id, patch))
    }

    async fn due_schedules(&self, now: Timestamp, limit: u32) -> LfResult<Vec<ScheduleRow>> {
        on!(&self.conns, reading, |conn| triggers::due(conn, now, limit))
    }

    async fn advance_schedule(&self, row: &ScheduleRow, to: Option<Timestamp>) -> LfResult<bool> {
        on!(&self.conns, write_one, |conn| triggers::advance(conn, row, to))
    }

    async fn followers(&self, kind: EventKind) -> LfResult<Vec<Follower>> {
        on!(&self.conns, reading, |conn| triggers::followers(conn, kind))
    }

    async fn next_schedule(&self) -> LfResult<Option<Timestamp>> {
        on!(&self.conns, reading, |conn| triggers::next(conn))
    }
}
