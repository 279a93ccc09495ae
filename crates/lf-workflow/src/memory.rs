//! In-memory implementations: a [`WorkflowStore`], a [`ConnectionStore`]
//! (which answers [`crate::ConnectionLookup`]) and a [`LensLookup`],
//! for tests, examples and apps that embed lf-workflow without a
//! database. Same contracts as the SQL stores.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use async_trait::async_trait;
use lf_core::{
    LabelName, LensId, LenserId, LfError, LfResult, Page, PageRequest, Reach, SearchQuery, Timestamp,
    VersionId, WorkflowId,
};

use crate::connection::{
    Connection, ConnectionStore, ConnectionTool, SealedSecret, connection_not_found, connection_taken,
};
use crate::follow::Follower;
use crate::lookup::{LensFacts, LensLookup};
use crate::model::{
    ConnectionRef, JsonObject, Provider, VersionSelector, VersionSummary, Visibility, Workflow,
    WorkflowFilter, WorkflowPatch, WorkflowVersion, WorkflowVersionId,
};
use crate::schedule::ScheduleRow;
use crate::store::WorkflowStore;

fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}
fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

struct Row {
    workflow: Workflow,
    /// Oldest first.
    versions: Vec<WorkflowVersion>,
    /// The head's schedule, when it has one.
    schedule: Option<ScheduleRow>,
    /// The event the head follows, when it does.
    follows: Option<Follower>,
}

impl Row {
    fn readable(&self, reach: Reach) -> bool {
        match reach {
            Reach::Everything => true,
            Reach::Lenser(me) => self.workflow.owner == me || self.workflow.visibility != Visibility::Private,
        }
    }
    fn listed(&self, reach: Reach) -> bool {
        match reach {
            Reach::Everything => true,
            Reach::Lenser(me) => self.workflow.owner == me || self.workflow.visibility == Visibility::Public,
        }
    }
}

/// A [`WorkflowStore`] kept in process memory.
#[derive(Default)]
pub struct MemoryWorkflowStore {
    rows: RwLock<HashMap<WorkflowId, Row>>,
}

impl MemoryWorkflowStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// A page of the workflows `reach` lists that `keep` keeps, newest
    /// first (`created_at` descending, then id descending).
    fn listed_page(
        &self,
        reach: Reach,
        page: PageRequest,
        keep: impl Fn(&Workflow) -> bool,
    ) -> Page<Workflow> {
        let rows = read(&self.rows);
        let mut hits: Vec<&Workflow> =
            rows.values().filter(|r| r.listed(reach)).map(|r| &r.workflow).filter(|w| keep(w)).collect();
        hits.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        let total = hits.len() as u64;
        let items =
            hits.into_iter().skip(page.offset() as usize).take(page.limit() as usize).cloned().collect();
        Page::new(items, total, page)
    }
}

/// The NOT_FOUND of a workflow, shared by every store.
pub fn workflow_not_found(id: WorkflowId) -> LfError {
    LfError::not_found("Workflow", id)
}

/// The NOT_FOUND of a missing version, shared by every store.
pub fn workflow_version_not_found(id: WorkflowId, which: VersionSelector) -> LfError {
    match which {
        VersionSelector::Head => workflow_not_found(id),
        VersionSelector::Number(n) => LfError::not_found(&format!("Version of workflow {id}:"), n),
        VersionSelector::Id(v) => LfError::not_found(&format!("Version of workflow {id}:"), v),
    }
}

/// The CONFLICT of a concurrent update, shared by every store.
pub fn workflow_head_moved(id: WorkflowId) -> LfError {
    LfError::conflict(format!(
        "workflow {id} got a new version from someone else while you were updating it. Read it again with get_workflow and retry."
    ))
}

fn apply(w: &mut Workflow, patch: &WorkflowPatch) {
    if let Some(t) = &patch.title {
        w.title = t.clone();
    }
    if let Some(d) = &patch.description {
        w.description = d.clone();
    }
    if let Some(v) = patch.visibility {
        w.visibility = v;
    }
    if let Some(r) = patch.public_runs {
        w.public_runs = r;
    }
    if let Some(a) = patch.archived_at {
        w.archived_at = a;
    }
    if let Some(u) = patch.updated_at {
        w.updated_at = u;
    }
}

/// Whether any id of `v` (the version's, a node's, an edge's) is taken in `rows`.
fn ids_taken(rows: &HashMap<WorkflowId, Row>, v: &WorkflowVersion) -> bool {
    let nodes: HashSet<_> = v.nodes.iter().map(|n| n.id).collect();
    let edges: HashSet<_> = v.edges.iter().map(|e| e.id).collect();
    nodes.len() < v.nodes.len()
        || edges.len() < v.edges.len()
        || rows.values().flat_map(|r| &r.versions).any(|o| {
            o.id == v.id
                || o.nodes.iter().any(|n| nodes.contains(&n.id))
                || o.edges.iter().any(|e| edges.contains(&e.id))
        })
}

#[async_trait]
impl WorkflowStore for MemoryWorkflowStore {
    async fn create_workflow(&self, workflow: &Workflow, first: &WorkflowVersion) -> LfResult<()> {
        let mut rows = write(&self.rows);
        if rows.contains_key(&workflow.id) || ids_taken(&rows, first) {
            return Err(LfError::conflict(format!(
                "workflow {} or one of its ids already exists",
                workflow.id
            )));
        }
        let schedule = ScheduleRow::for_head(workflow.owner, first, first.created_at);
        let follows = Follower::for_head(workflow.owner, first);
        rows.insert(
            workflow.id,
            Row { workflow: workflow.clone(), versions: vec![first.clone()], schedule, follows },
        );
        Ok(())
    }

    async fn get_workflow(&self, reach: Reach, id: WorkflowId) -> LfResult<Workflow> {
        match read(&self.rows).get(&id) {
            Some(r) if r.readable(reach) => Ok(r.workflow.clone()),
            _ => Err(workflow_not_found(id)),
        }
    }

    async fn get_version(
        &self,
        reach: Reach,
        id: WorkflowId,
        which: VersionSelector,
    ) -> LfResult<WorkflowVersion> {
        let rows = read(&self.rows);
        let row = rows.get(&id).filter(|r| r.readable(reach)).ok_or_else(|| workflow_not_found(id))?;
        let found = match which {
            VersionSelector::Head => row.versions.iter().find(|v| v.id == row.workflow.head_version_id),
            VersionSelector::Number(n) => row.versions.iter().find(|v| v.number == n),
            VersionSelector::Id(vid) => row.versions.iter().find(|v| v.id == vid),
        };
        found.cloned().ok_or_else(|| workflow_version_not_found(id, which))
    }

    async fn list_versions(&self, reach: Reach, id: WorkflowId) -> LfResult<Vec<VersionSummary>> {
        let rows = read(&self.rows);
        let row = rows.get(&id).filter(|r| r.readable(reach)).ok_or_else(|| workflow_not_found(id))?;
        Ok(row.versions.iter().rev().map(WorkflowVersion::summary).collect())
    }

    async fn list_workflows(
        &self,
        reach: Reach,
        filter: &WorkflowFilter,
        page: PageRequest,
    ) -> LfResult<Page<Workflow>> {
        Ok(self.listed_page(reach, page, |w| {
            (filter.include_archived || w.archived_at.is_none())
                && filter.visibility.is_none_or(|v| w.visibility == v)
                && filter.owner.is_none_or(|o| w.owner == o)
        }))
    }

    async fn search_workflows(
        &self,
        reach: Reach,
        query: &SearchQuery,
        page: PageRequest,
    ) -> LfResult<Page<Workflow>> {
        Ok(self.listed_page(reach, page, |w| {
            let title = w.title.as_str().to_lowercase();
            let description = w.description.as_ref().map(|d| d.as_str().to_lowercase()).unwrap_or_default();
            w.archived_at.is_none()
                && query
                    .terms()
                    .iter()
                    .all(|t| title.contains(t.as_str()) || description.contains(t.as_str()))
        }))
    }

    async fn append_version(
        &self,
        id: WorkflowId,
        expected_head: WorkflowVersionId,
        version: &WorkflowVersion,
        patch: &WorkflowPatch,
    ) -> LfResult<()> {
        let mut rows = write(&self.rows);
        let taken = ids_taken(&rows, version);
        let row = rows.get_mut(&id).ok_or_else(|| workflow_not_found(id))?;
        if row.workflow.head_version_id != expected_head {
            return Err(workflow_head_moved(id));
        }
        if taken || row.versions.iter().any(|v| v.number == version.number) || version.workflow_id != id {
            return Err(LfError::conflict(format!("workflow {id} already has version {}", version.number)));
        }
        row.versions.push(version.clone());
        row.workflow.head_version_id = version.id;
        row.workflow.head_version = version.number;
        row.schedule = ScheduleRow::for_head(row.workflow.owner, version, version.created_at);
        row.follows = Follower::for_head(row.workflow.owner, version);
        apply(&mut row.workflow, patch);
        Ok(())
    }

    async fn update_workflow(&self, id: WorkflowId, patch: &WorkflowPatch) -> LfResult<()> {
        let mut rows = write(&self.rows);
        let row = rows.get_mut(&id).ok_or_else(|| workflow_not_found(id))?;
        apply(&mut row.workflow, patch);
        Ok(())
    }

    async fn due_schedules(&self, now: Timestamp, limit: u32) -> LfResult<Vec<ScheduleRow>> {
        let rows = read(&self.rows);
        let mut due: Vec<ScheduleRow> = rows
            .values()
            .filter(|r| r.workflow.archived_at.is_none())
            .filter_map(|r| r.schedule.clone())
            .filter(|s| s.next_fire_at <= now)
            .collect();
        due.sort_by_key(|s| (s.next_fire_at, s.workflow_id));
        due.truncate(limit as usize);
        Ok(due)
    }

    async fn advance_schedule(&self, row: &ScheduleRow, to: Option<Timestamp>) -> LfResult<bool> {
        let mut rows = write(&self.rows);
        let Some(r) = rows.get_mut(&row.workflow_id) else { return Ok(false) };
        let Some(s) = r.schedule.as_mut() else { return Ok(false) };
        if s.version_id != row.version_id || s.next_fire_at != row.next_fire_at {
            return Ok(false);
        }
        match to {
            Some(t) => s.next_fire_at = t,
            None => r.schedule = None,
        }
        Ok(true)
    }

    async fn followers(&self, kind: lf_core::EventKind) -> LfResult<Vec<Follower>> {
        let rows = read(&self.rows);
        Ok(rows
            .values()
            .filter(|r| r.workflow.archived_at.is_none())
            .filter_map(|r| r.follows.clone())
            .filter(|f| f.kind == kind)
            .collect())
    }

    async fn next_schedule(&self) -> LfResult<Option<Timestamp>> {
        let rows = read(&self.rows);
        Ok(rows
            .values()
            .filter(|r| r.workflow.archived_at.is_none())
            .filter_map(|r| r.schedule.as_ref().map(|s| s.next_fire_at))
            .min())
    }
}

/// A [`LensLookup`] over lenses registered by hand: who owns each, whether
/// it is private, and its facts per version (the last registered is the
/// head).
#[derive(Default)]
pub struct MemoryLenses {
    lenses: RwLock<HashMap<LensId, KnownLens>>,
}

struct KnownLens {
    owner: LenserId,
    private: bool,
    /// Oldest first: the last is the head.
    versions: Vec<LensFacts>,
    /// By name: the version each label points at.
    labels: BTreeMap<LabelName, VersionId>,
}

impl MemoryLenses {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a version of a lens owned by `owner` (its new head).
    pub fn insert(&self, owner: LenserId, private: bool, facts: LensFacts) {
        let mut lenses = write(&self.lenses);
        let entry = lenses.entry(facts.lens_id).or_insert_with(|| KnownLens {
            owner,
            private,
            versions: Vec::new(),
            labels: BTreeMap::new(),
        });
        entry.versions.push(facts);
    }

    /// Points `label` of a registered lens at `version` (or removes it).
    /// Panics on a lens not registered.
    pub fn set_label(&self, lens_id: LensId, label: LabelName, version: Option<VersionId>) {
        let mut lenses = write(&self.lenses);
        let lens = lenses.get_mut(&lens_id).expect("a registered lens");
        match version {
            Some(v) => lens.labels.insert(label, v),
            None => lens.labels.remove(&label),
        };
    }
}

#[async_trait]
impl LensLookup for MemoryLenses {
    async fn lens(&self, reach: Reach, lens_id: LensId, version: Option<VersionId>) -> LfResult<LensFacts> {
        let lenses = read(&self.lenses);
        let not_found = || LfError::not_found("Lens", lens_id);
        let KnownLens { owner, private, versions, .. } = lenses.get(&lens_id).ok_or_else(not_found)?;
        if *private && reach != Reach::Everything && reach != Reach::Lenser(*owner) {
            return Err(not_found());
        }
        let found = match version {
            None => versions.last(),
            Some(v) => versions.iter().find(|f| f.version_id == v),
        };
        found.cloned().ok_or_else(not_found)
    }

    async fn labels(&self, reach: Reach, lens_id: LensId) -> LfResult<Vec<(LabelName, VersionId)>> {
        let lenses = read(&self.lenses);
        let not_found = || LfError::not_found("Lens", lens_id);
        let lens = lenses.get(&lens_id).ok_or_else(not_found)?;
        if lens.private && reach != Reach::Everything && reach != Reach::Lenser(lens.owner) {
            return Err(not_found());
        }
        Ok(lens.labels.iter().map(|(k, v)| (*k, *v)).collect())
    }
}

/// A [`ConnectionStore`] kept in process memory; as every store, it also
/// answers [`crate::ConnectionLookup`].
#[derive(Default)]
pub struct MemoryConnections {
    saved: RwLock<HashMap<LenserId, OwnersConnections>>,
}

/// One owner's connections by ref (a `BTreeMap` keeps them in byte order),
/// each with its sealed secret and its tools.
type OwnersConnections = BTreeMap<String, (Connection, SealedSecret, Vec<ConnectionTool>)>;

impl MemoryConnections {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a connection of `owner` with no settings and an empty
    /// sealed secret (one no sealer opens), replacing one of the same ref:
    /// for tests of what names connections. Panics on a ref or provider the
    /// blueprint would refuse.
    pub fn insert(&self, owner: LenserId, provider: &str, connection_ref: &str) {
        let connection = Connection {
            owner,
            connection_ref: ConnectionRef::parse("connection_ref", connection_ref).expect("a valid ref"),
            provider: Provider::parse("provider", provider).expect("a valid provider"),
            settings: JsonObject::new(),
            created_at: Timestamp::from_micros(0),
        };
        write(&self.saved).entry(owner).or_default().insert(
            connection_ref.to_owned(),
            (connection, SealedSecret::from_bytes(Vec::new()), Vec::new()),
        );
    }
}

#[async_trait]
impl ConnectionStore for MemoryConnections {
    async fn add_connection(&self, connection: &Connection, secret: &SealedSecret) -> LfResult<()> {
        let mut saved = write(&self.saved);
        let mine = saved.entry(connection.owner).or_default();
        let r = connection.connection_ref.as_str();
        if mine.contains_key(r) {
            return Err(connection_taken(&connection.connection_ref));
        }
        mine.insert(r.to_owned(), (connection.clone(), secret.clone(), Vec::new()));
        Ok(())
    }

    async fn list_connections(&self, owner: LenserId) -> LfResult<Vec<Connection>> {
        Ok(read(&self.saved)
            .get(&owner)
            .into_iter()
            .flat_map(|m| m.values().map(|(c, ..)| c.clone()))
            .collect())
    }

    async fn connection_secret(
        &self,
        owner: LenserId,
        connection_ref: &ConnectionRef,
    ) -> LfResult<(Connection, SealedSecret)> {
        read(&self.saved)
            .get(&owner)
            .and_then(|m| m.get(connection_ref.as_str()))
            .map(|(c, s, _)| (c.clone(), s.clone()))
            .ok_or_else(|| connection_not_found(connection_ref))
    }

    async fn remove_connection(&self, owner: LenserId, connection_ref: &ConnectionRef) -> LfResult<()> {
        write(&self.saved)
            .get_mut(&owner)
            .and_then(|m| m.remove(connection_ref.as_str()))
            .map(drop)
            .ok_or_else(|| connection_not_found(connection_ref))
    }

    async fn connection_tools(
        &self,
        owner: LenserId,
        connection_ref: &ConnectionRef,
    ) -> LfResult<Vec<ConnectionTool>> {
        read(&self.saved)
            .get(&owner)
            .and_then(|m| m.get(connection_ref.as_str()))
            .map(|(.., t)| t.clone())
            .ok_or_else(|| connection_not_found(connection_ref))
    }

    async fn put_connection_tools(
        &self,
        owner: LenserId,
        connection_ref: &ConnectionRef,
        tools: &[ConnectionTool],
        _at: Timestamp,
    ) -> LfResult<()> {
        let mut saved = write(&self.saved);
        let found = saved.get_mut(&owner).and_then(|m| m.get_mut(connection_ref.as_str()));
        let (.., t) = found.ok_or_else(|| connection_not_found(connection_ref))?;
        *t = tools.to_vec();
        Ok(())
    }
}
