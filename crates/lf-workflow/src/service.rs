//! The Workflow use cases. Each takes the caller's [`Principal`]; reads go
//! through the store with the caller's reach, writes check ownership
//! first. Lenses are looked up with the caller's reach (a step may only
//! name a lens its author can read); saved connections are the workflow
//! owner's (a run uses the owner's).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use lf_core::{
    Clock, Detail, ErrorCode, LensId, LenserId, LfError, LfResult, Page, PageRequest, Principal, Reach,
    SearchQuery, SystemClock, Timestamp, WorkflowId,
};

use crate::blueprint::{Blueprint, GraphDraft, RawBlueprint, RawConnection, RawStep};
use crate::catalog::{Category, NodeTypeSpec, catalog};
use crate::connection::MCP_PROVIDER;
use crate::hook::{
    HookHash, IssuedWebhook, MemoryWebhookStore, WEBHOOK_TRIGGER, WebhookSecret, WebhookStore, hook_refused,
};
use crate::lookup::{ConnectionLookup, EgressPolicy, Facts, LensFacts, LensLookup, LensUse};
use crate::model::{
    Changelog, Description, NodeKind, Title, VersionSelector, VersionSummary, Visibility, Workflow,
    WorkflowFilter, WorkflowPatch, WorkflowVersion,
};
use crate::store::WorkflowStore;
use crate::validate::{Graph, Issue, Report, connection_refs, lens_uses, mcp_tool_refs, validate};
use crate::view::{Described, GraphView, describe, redacted};

/// A new workflow: the blueprint, and the owner the caller asks for
/// (`lenser_id`; `None`: the caller, or the service's acting lenser).
#[derive(Clone, Debug, Default)]
pub struct NewWorkflow {
    pub blueprint: RawBlueprint,
    pub owner: Option<LenserId>,
}

/// How a created workflow's steps read, for the caller to check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreationSummary {
    pub step_count: usize,
    pub connection_count: usize,
    /// `(key, name, kind, node_type)` per step, in order.
    pub steps: Vec<(String, String, NodeKind, String)>,
}

/// What `create` made.
#[derive(Clone, Debug, PartialEq)]
pub struct Created {
    pub workflow: Workflow,
    pub version: WorkflowVersion,
    /// The validation of the new version (warnings included); for an empty
    /// container, WORKFLOW_EMPTY.
    pub report: Report,
    pub summary: CreationSummary,
    pub next_steps: Vec<String>,
    /// The webhook's secret, when version 1's trigger is a webhook trigger.
    pub webhook: Option<IssuedWebhook>,
}

/// A change: a new version from a full blueprint (`steps`, and
/// `connections`), and/or new metadata.
#[derive(Clone, Debug)]
pub struct WorkflowUpdate {
    pub workflow_id: WorkflowId,
    pub steps: Option<Vec<RawStep>>,
    pub connections: Option<Vec<RawConnection>>,
    pub title: Option<Title>,
    pub description: Option<Description>,
    pub visibility: Option<Visibility>,
    /// Whether every reader of the workflow reads every run of it.
    pub public_runs: Option<bool>,
    /// The new version's changelog (made from the change when `None`).
    pub changelog: Option<Changelog>,
}

impl WorkflowUpdate {
    pub fn new(workflow_id: WorkflowId) -> Self {
        Self {
            workflow_id,
            steps: None,
            connections: None,
            title: None,
            description: None,
            visibility: None,
            public_runs: None,
            changelog: None,
        }
    }
}

/// What `update` did.
#[derive(Clone, Debug, PartialEq)]
pub struct Updated {
    pub workflow: Workflow,
    /// The head after the update.
    pub head: VersionSummary,
    /// The new version's validation, when one was made.
    pub report: Option<Report>,
    /// The webhook's secret, when the new version's trigger is a webhook
    /// trigger and the workflow had no secret yet.
    pub webhook: Option<IssuedWebhook>,
}

/// A workflow with its head version and every version.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkflowView {
    pub workflow: Workflow,
    pub head: VersionSummary,
    /// Newest first.
    pub versions: Vec<VersionSummary>,
    /// The head's trigger: `(key, node_type, config normalized)`; its
    /// schedule, for a schedule trigger.
    pub trigger: Option<(String, String, serde_json::Map<String, serde_json::Value>)>,
}

/// A validated version.
#[derive(Clone, Debug, PartialEq)]
pub struct Validated {
    pub workflow: Workflow,
    pub version: VersionSummary,
    pub report: Report,
}

/// A listing of the node catalog.
#[derive(Clone, Debug)]
pub struct NodeTypeList {
    pub items: Vec<&'static NodeTypeSpec>,
    pub total: usize,
    /// Every category, so a caller who asked for an unknown one can correct itself.
    pub categories: &'static [Category],
}

/// The Workflow use cases over a store and the two lookups.
#[derive(Clone)]
pub struct WorkflowService {
    store: Arc<dyn WorkflowStore>,
    lenses: Arc<dyn LensLookup>,
    connections: Arc<dyn ConnectionLookup>,
    hooks: Arc<dyn WebhookStore>,
    clock: Arc<dyn Clock>,
    egress: Option<Arc<dyn EgressPolicy>>,
}

impl WorkflowService {
    pub fn new(
        store: Arc<dyn WorkflowStore>,
        lenses: Arc<dyn LensLookup>,
        connections: Arc<dyn ConnectionLookup>,
    ) -> Self {
        Self {
            store,
            lenses,
            connections,
            hooks: Arc::new(MemoryWebhookStore::new()),
            clock: Arc::new(SystemClock),
            egress: None,
        }
    }

    /// Keeps webhook secrets in `hooks` (without it, in this process's memory).
    pub fn with_webhooks(mut self, hooks: Arc<dyn WebhookStore>) -> Self {
        self.hooks = hooks;
        self
    }

    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Warns (EGRESS_REFUSED) of each step URL that `egress`, the policy
    /// the runner's HTTP steps meet, refuses; without one, URLs are not
    /// judged.
    pub fn with_egress_policy(mut self, egress: Arc<dyn EgressPolicy>) -> Self {
        self.egress = Some(egress);
        self
    }

    pub fn store(&self) -> &Arc<dyn WorkflowStore> {
        &self.store
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// A workflow the caller may change: NOT_FOUND when not readable,
    /// FORBIDDEN when readable but someone else's.
    async fn load_for_write(&self, p: &Principal, id: WorkflowId) -> LfResult<Workflow> {
        let w = self.store.get_workflow(p.reach(), id).await?;
        if !p.may_write(w.owner) {
            return Err(LfError::forbidden(format!(
                "Workflow {id} belongs to another lenser: you can read and run it but not change it. Create your own with create_workflow."
            )));
        }
        Ok(w)
    }

    /// The lenses (with the caller's reach) and saved connections (the
    /// owner's) a graph uses, and the egress policy its steps meet.
    async fn facts(&self, reach: Reach, owner: LenserId, graph: &Graph<'_>) -> LfResult<Facts> {
        let mut lenses = HashMap::new();
        for b in lens_uses(graph, catalog()) {
            let found = match self.lens_facts(reach, &b).await {
                Ok(f) => Some(f),
                Err(e) if e.code() == ErrorCode::NotFound => None,
                Err(e) => return Err(e),
            };
            lenses.insert(b, found);
        }
        let refs = connection_refs(graph);
        let connections = if refs.is_empty() {
            HashSet::new()
        } else {
            self.connections.saved(owner, &refs).await?.into_iter().collect()
        };
        let mut mcp_tools = HashMap::new();
        for r in mcp_tool_refs(graph, catalog()) {
            if connections.iter().any(|c| c.connection_ref == r && c.provider == MCP_PROVIDER) {
                let tools = self.connections.saved_tools(owner, &r).await?;
                mcp_tools.insert(r, tools);
            }
        }
        Ok(Facts {
            lenses: Some(lenses),
            connections: Some(connections),
            egress: self.egress.clone(),
            mcp_tools,
        })
    }

    /// The facts of the lens version `b` names: a label's version, or the
    /// head's with the labels the lens has when it lacks the label.
    async fn lens_facts(&self, reach: Reach, b: &LensUse) -> LfResult<LensFacts> {
        let Some(label) = b.label.as_ref().filter(|l| !l.is_latest() && b.version_id.is_none()) else {
            return self.lenses.lens(reach, b.lens_id, b.version_id).await;
        };
        let labels = self.lenses.labels(reach, b.lens_id).await?;
        match labels.iter().find(|(name, _)| name == label) {
            Some((_, version)) => self.lenses.lens(reach, b.lens_id, Some(*version)).await,
            None => {
                let head = self.lenses.lens(reach, b.lens_id, None).await?;
                let has = labels.into_iter().map(|(name, _)| name.to_string()).collect();
                Ok(LensFacts { missing_label: Some(has), ..head })
            }
        }
    }

    /// Checks a new version as `create` and `update` must: NOT_FOUND for a
    /// lens the caller cannot read, INVALID_ARGUMENT with the first error
    /// (and all of them in `details.errors`) when it does not validate.
    async fn admit(&self, p: &Principal, owner: LenserId, version: &WorkflowVersion) -> LfResult<Report> {
        let graph = Graph::of_version(version);
        let facts = self.facts(p.reach(), owner, &graph).await?;
        if let Some(missing) = facts.lenses.iter().flatten().find(|(_, f)| f.is_none()).map(|(b, _)| *b) {
            let step = version
                .nodes
                .iter()
                .find(|n| n.lens.is_some_and(|l| l.lens_id == missing.lens_id))
                .map(|n| n.key.as_str());
            return Err(lens_not_found(missing.lens_id, step));
        }
        let report = validate(&graph, catalog(), &facts);
        if let Some(first) = report.errors.first() {
            return Err(LfError::invalid_argument(first.message.clone())
                .with_detail("hint", Detail::Str(first.hint.clone()))
                .with_detail(
                    "errors",
                    Detail::List(report.errors.iter().map(|i| issue_detail(i, &report)).collect()),
                ));
        }
        Ok(report)
    }

    /// Creates a workflow and its version 1 from a blueprint, in one
    /// transaction. With no steps, an empty container. An agent caller is
    /// recorded as the `agent` of both; its owner owns them.
    pub async fn create(&self, p: &Principal, new: NewWorkflow) -> LfResult<Created> {
        let owner = match new.owner {
            Some(o) if p.may_write(o) => o,
            Some(o) => {
                return Err(LfError::forbidden(format!(
                    "You cannot create a workflow owned by lenser {o}: leave lenser_id out to own it yourself."
                )));
            }
            None => p.owner_for_create()?,
        };
        let bp = Blueprint::parse(new.blueprint, catalog())?;
        let now = self.now();
        let empty = bp.graph.steps.is_empty();
        let summary = creation_summary(&bp.graph);
        let id = WorkflowId::new();
        let changelog = if empty { "Created as an empty container." } else { "Initial version." };
        let version = WorkflowVersion {
            agent: p.agent(),
            ..bp.graph.into_version(id, 1, changelog.to_owned(), p.lenser().unwrap_or(owner), now)
        };
        let report = if empty {
            validate(&Graph::of_version(&version), catalog(), &Facts::none())
        } else {
            self.admit(p, owner, &version).await?
        };
        let workflow = Workflow {
            id,
            owner,
            title: bp.title,
            description: bp.description,
            visibility: bp.visibility,
            // Runs are opened to every reader by update_workflow only, explicitly.
            public_runs: false,
            head_version_id: version.id,
            head_version: 1,
            created_at: now,
            updated_at: now,
            archived_at: None,
            agent: p.agent(),
        };
        self.store.create_workflow(&workflow, &version).await?;
        let webhook = self.first_webhook_secret(&version).await?;
        let next_steps = if empty {
            vec!["Add steps with update_workflow (a trigger first), then call validate_workflow.".to_owned()]
        } else {
            vec![
                "Call validate_workflow with the returned workflow id.".to_owned(),
                "Call run_workflow after validation succeeds.".to_owned(),
            ]
        };
        Ok(Created { workflow, version, report, summary, next_steps, webhook })
    }

    /// A new immutable version from a full blueprint, and/or new metadata.
    /// CONFLICT if another version landed meanwhile. An agent caller is
    /// recorded as the new version's `agent` (the workflow keeps the agent
    /// that created it).
    pub async fn update(&self, p: &Principal, u: WorkflowUpdate) -> LfResult<Updated> {
        let w = self.load_for_write(p, u.workflow_id).await?;
        let graph_change = u.steps.is_some() || u.connections.is_some();
        if !graph_change && u.changelog.is_some() {
            return Err(LfError::invalid_argument(
                "changelog was given but no steps: only a new version has a changelog. Drop changelog, or give the full blueprint.",
            )
            .with_field("changelog"));
        }
        if !graph_change
            && u.title.is_none()
            && u.description.is_none()
            && u.visibility.is_none()
            && u.public_runs.is_none()
        {
            return Err(LfError::invalid_argument(
                "Nothing to change: give steps and connections (a new version), or title, description, visibility or public_runs.",
            ));
        }
        let now = self.now();
        let patch = WorkflowPatch {
            title: u.title,
            description: u.description.map(|d| Some(d).filter(|d| !d.as_str().is_empty())),
            visibility: u.visibility,
            public_runs: u.public_runs,
            updated_at: Some(now),
            ..Default::default()
        };
        if !graph_change {
            self.store.update_workflow(w.id, &patch).await?;
            let workflow = self.store.get_workflow(p.reach(), w.id).await?;
            let head = self.store.get_version(p.reach(), w.id, VersionSelector::Head).await?.summary();
            return Ok(Updated { workflow, head, report: None, webhook: None });
        }
        let Some(steps) = u.steps.filter(|s| !s.is_empty()) else {
            return Err(LfError::invalid_argument(
                "A new version needs its full blueprint: give steps (at least a trigger) along with connections. To retire a workflow, archive it.",
            )
            .with_field("steps"));
        };
        let draft = GraphDraft::parse(steps, u.connections.unwrap_or_default(), catalog())?;
        let head = self.store.get_version(p.reach(), w.id, VersionSelector::Head).await?;
        let changelog = u.changelog.map_or_else(|| changelog_between(&head, &draft), Changelog::into_string);
        let version = WorkflowVersion {
            agent: p.agent(),
            ..draft.into_version(w.id, head.number + 1, changelog, p.lenser().unwrap_or(w.owner), now)
        };
        let report = self.admit(p, w.owner, &version).await?;
        self.store.append_version(w.id, head.id, &version, &patch).await?;
        let webhook = self.first_webhook_secret(&version).await?;
        let workflow = self.store.get_workflow(p.reach(), w.id).await?;
        Ok(Updated { workflow, head: version.summary(), report: Some(report), webhook })
    }

    /// A secret for a version's workflow when the version's trigger is a
    /// webhook trigger and the workflow has none yet (of racing updates,
    /// one shows the secret that is kept).
    async fn first_webhook_secret(&self, version: &WorkflowVersion) -> LfResult<Option<IssuedWebhook>> {
        if !has_webhook_trigger(version) {
            return Ok(None);
        }
        let (secret, hash) = WebhookSecret::generate()?;
        let added = self.hooks.add_webhook(version.workflow_id, &hash, self.now()).await?;
        Ok(added.then_some(IssuedWebhook { workflow_id: version.workflow_id, secret }))
    }

    /// A new webhook secret for the workflow, shown once; the old one fails
    /// from now on. Only its owner (or the Service principal) may; refused
    /// when the head version's trigger is not a webhook trigger.
    pub async fn rotate_webhook_secret(&self, p: &Principal, id: WorkflowId) -> LfResult<IssuedWebhook> {
        let w = self.load_for_write(p, id).await?;
        let head = self.store.get_version(p.reach(), w.id, VersionSelector::Head).await?;
        if !has_webhook_trigger(&head) {
            let trigger = head.nodes.iter().find(|n| n.kind == NodeKind::Trigger);
            let what =
                trigger.map_or("no trigger".to_owned(), |n| format!("a {} trigger", n.node_type.as_str()));
            return Err(LfError::invalid_argument(format!(
                "Workflow {id} has no webhook: its head version {} has {what}. Make its trigger a {WEBHOOK_TRIGGER} with update_workflow, whose answer shows the secret."
            , head.number))
            .with_field("workflow_id"));
        }
        let (secret, hash) = WebhookSecret::generate()?;
        self.hooks.replace_webhook(w.id, &hash, self.now()).await?;
        Ok(IssuedWebhook { workflow_id: w.id, secret })
    }

    /// The workflow a webhook call may start: `secret` is its webhook's,
    /// it is not archived and its head's trigger is a webhook trigger.
    /// Otherwise, whatever was wrong, [`hook_refused`]. Reads the workflow
    /// whatever its visibility: the secret is the credential.
    pub async fn webhook_caller(&self, id: WorkflowId, secret: Option<&str>) -> LfResult<Workflow> {
        // Hashed whether or not the workflow exists, to answer alike.
        let presented = HookHash::of(secret.unwrap_or_default());
        let stored = self.hooks.webhook(id).await?;
        let (workflow, head) =
            match self.store.get_workflow_and_version(Reach::Everything, id, VersionSelector::Head).await {
                Ok(found) => found,
                Err(e) if e.code() == ErrorCode::NotFound => return Err(hook_refused()),
                Err(e) => return Err(e),
            };
        let matches = stored.is_some_and(|s| s.hash.ct_eq(&presented)) && secret.is_some();
        if !matches || workflow.archived_at.is_some() || !has_webhook_trigger(&head) {
            return Err(hook_refused());
        }
        Ok(workflow)
    }

    /// Hides a workflow from lists; it stays readable by id, and its
    /// versions and runs are kept. Needs `confirm`. Idempotent.
    pub async fn archive(&self, p: &Principal, id: WorkflowId, confirm: bool) -> LfResult<Workflow> {
        if !confirm {
            return Err(LfError::confirmation_required("Archiving a workflow"));
        }
        let w = self.load_for_write(p, id).await?;
        let now = self.now();
        let patch = WorkflowPatch {
            archived_at: Some(Some(w.archived_at.unwrap_or(now))),
            updated_at: Some(now),
            ..Default::default()
        };
        self.store.update_workflow(id, &patch).await?;
        self.store.get_workflow(p.reach(), id).await
    }

    /// The workflow, its head version and every version.
    pub async fn get(&self, p: &Principal, id: WorkflowId) -> LfResult<WorkflowView> {
        let (workflow, head) =
            self.store.get_workflow_and_version(p.reach(), id, VersionSelector::Head).await?;
        let versions = self.store.list_versions(p.reach(), id).await?;
        let trigger = head.nodes.iter().find(|n| n.kind == NodeKind::Trigger).map(|n| {
            let config = catalog()
                .get(n.node_type.as_str())
                .map_or_else(|| n.config.clone(), |s| crate::catalog::normalize_config(s, &n.config));
            (n.key.as_str().to_owned(), n.node_type.as_str().to_owned(), config)
        });
        Ok(WorkflowView { workflow, head: head.summary(), versions, trigger })
    }

    /// A version's graph: secret-named fields redacted everywhere, and the
    /// connections' refs for anyone but those who may change the workflow;
    /// lens parameter assignments shown.
    pub async fn graph(&self, p: &Principal, id: WorkflowId, which: VersionSelector) -> LfResult<GraphView> {
        let (workflow, version) = self.store.get_workflow_and_version(p.reach(), id, which).await?;
        let hide_refs = !p.may_write(workflow.owner);
        Ok(redacted(workflow, version, hide_refs))
    }

    /// A compact explanation: triggers, steps, parameter assignments, connections.
    pub async fn describe(
        &self,
        p: &Principal,
        id: WorkflowId,
        which: VersionSelector,
    ) -> LfResult<Described> {
        let (workflow, version) = self.store.get_workflow_and_version(p.reach(), id, which).await?;
        Ok(describe(workflow, &version))
    }

    /// Listed workflows, newest first.
    pub async fn list(
        &self,
        p: &Principal,
        filter: &WorkflowFilter,
        page: PageRequest,
    ) -> LfResult<Page<Workflow>> {
        self.store.list_workflows(p.reach(), filter, page).await
    }

    /// Listed workflows whose title or description contains every word of
    /// `query`, newest first (archived ones left out).
    pub async fn search(
        &self,
        p: &Principal,
        query: &SearchQuery,
        page: PageRequest,
    ) -> LfResult<Page<Workflow>> {
        self.store.search_workflows(p.reach(), query, page).await
    }

    /// Validates a stored version (the head by default) against the
    /// catalog, the lenses the caller can read and the owner's saved
    /// connections.
    pub async fn validate(
        &self,
        p: &Principal,
        id: WorkflowId,
        which: VersionSelector,
    ) -> LfResult<Validated> {
        let (workflow, version) = self.store.get_workflow_and_version(p.reach(), id, which).await?;
        let graph = Graph::of_version(&version);
        let facts = self.facts(p.reach(), workflow.owner, &graph).await?;
        let report = validate(&graph, catalog(), &facts);
        Ok(Validated { workflow, version: version.summary(), report })
    }

    /// A version of a workflow the caller may read, with its reach.
    pub async fn version(
        &self,
        p: &Principal,
        id: WorkflowId,
        which: VersionSelector,
    ) -> LfResult<WorkflowVersion> {
        self.store.get_version(p.reach(), id, which).await
    }

    /// A version that may run: readable, not archived, and valid with the
    /// lenses the caller can read and the caller's saved connections (a
    /// run opens its starter's connections, so running someone else's
    /// public workflow never uses its owner's secrets).
    /// INVALID_ARGUMENT with the first problem (and all of them in
    /// `details.errors`) otherwise.
    pub async fn runnable(
        &self,
        p: &Principal,
        id: WorkflowId,
        which: VersionSelector,
    ) -> LfResult<(Workflow, WorkflowVersion)> {
        let (workflow, version) = self.store.get_workflow_and_version(p.reach(), id, which).await?;
        if workflow.archived_at.is_some() {
            return Err(LfError::new(
                ErrorCode::InvalidTransition,
                format!("Workflow {id} is archived: its runs are kept, but it does not start new ones."),
            ));
        }
        let graph = Graph::of_version(&version);
        // A run uses its starter's saved connections, never the owner's.
        let facts = self.facts(p.reach(), p.owner_for_create()?, &graph).await?;
        let report = validate(&graph, catalog(), &facts);
        if let Some(first) = report.errors.first() {
            return Err(LfError::invalid_argument(format!(
                "Workflow {id} version {} does not validate: {} Fix it with update_workflow; validate_workflow lists every problem.",
                version.number, first.message
            ))
            .with_detail("hint", Detail::Str(first.hint.clone()))
            .with_detail(
                "errors",
                Detail::List(report.errors.iter().map(|i| issue_detail(i, &report)).collect()),
            ));
        }
        if !report.run_ready {
            let why = report.warnings.first().map_or("it is not ready to run", |w| w.message.as_str());
            return Err(LfError::invalid_argument(format!(
                "Workflow {id} version {} is not ready to run: {why}",
                version.number
            )));
        }
        Ok((workflow, version))
    }

    /// The catalog's types, of one category when asked (an unknown category
    /// lists none).
    pub fn node_types(category: Option<&str>) -> NodeTypeList {
        let items: Vec<&'static NodeTypeSpec> = match category {
            Some(c) => catalog().in_category(c).collect(),
            None => catalog().entries().iter().collect(),
        };
        NodeTypeList { total: items.len(), items, categories: Category::ALL }
    }

    /// One type, by name or alias. NOT_FOUND naming the closest types.
    pub fn node_type(name: &str) -> LfResult<&'static NodeTypeSpec> {
        catalog().get(name).ok_or_else(|| {
            let closest = catalog().closest(name, 3);
            let hint = if closest.is_empty() {
                "Call list_workflow_node_types to see them.".to_owned()
            } else {
                format!("Did you mean {}?", closest.join(", "))
            };
            LfError::new(
                ErrorCode::NotFound,
                format!(
                    "Workflow node type \"{}\" is not registered in the catalog. {hint}",
                    lf_core::clip(name, 100)
                ),
            )
            .with_detail("closest", Detail::Strs(closest.iter().map(|s| (*s).to_owned()).collect()))
        })
    }
}

/// Whether a version's trigger is a webhook trigger.
fn has_webhook_trigger(version: &WorkflowVersion) -> bool {
    version.nodes.iter().any(|n| n.kind == NodeKind::Trigger && n.node_type.as_str() == WEBHOOK_TRIGGER)
}

fn lens_not_found(lens_id: LensId, step: Option<&str>) -> LfError {
    let e = LfError::not_found("Lens", lens_id);
    match step {
        Some(k) => e.with_detail("step", Detail::Str(k.to_owned())),
        None => e,
    }
}

fn creation_summary(g: &GraphDraft) -> CreationSummary {
    CreationSummary {
        step_count: g.steps.len(),
        connection_count: g.connections.len(),
        steps: g
            .steps
            .iter()
            .map(|s| {
                (
                    s.key.as_str().to_owned(),
                    s.name.as_str().to_owned(),
                    s.kind,
                    s.node_type.as_str().to_owned(),
                )
            })
            .collect(),
    }
}

/// "Added steps a, b; removed c; changed d. 4 steps, 3 connections."
fn changelog_between(old: &WorkflowVersion, new: &GraphDraft) -> String {
    let before: HashMap<&str, _> = old.nodes.iter().map(|n| (n.key.as_str(), n)).collect();
    let after: HashSet<&str> = new.steps.iter().map(|s| s.key.as_str()).collect();
    let added: Vec<&str> =
        new.steps.iter().map(|s| s.key.as_str()).filter(|k| !before.contains_key(k)).collect();
    let removed: Vec<&str> =
        old.nodes.iter().map(|n| n.key.as_str()).filter(|k| !after.contains(k)).collect();
    let changed: Vec<&str> = new
        .steps
        .iter()
        .filter(|s| {
            before.get(s.key.as_str()).is_some_and(|n| {
                n.node_type != s.node_type
                    || n.lens != s.lens
                    || n.parameters != s.parameters
                    || n.config != s.config
                    || n.connector != s.connector
                    || n.name != s.name
            })
        })
        .map(|s| s.key.as_str())
        .collect();
    let mut parts = Vec::new();
    for (what, keys) in [("Added", &added), ("removed", &removed), ("changed", &changed)] {
        if !keys.is_empty() {
            parts.push(format!("{what} {}", keys.join(", ")));
        }
    }
    let counts = format!("{} steps, {} connections.", new.steps.len(), new.connections.len());
    if parts.is_empty() {
        format!("Connections rewired. {counts}")
    } else {
        format!("{}. {counts}", parts.join("; "))
    }
}

/// An issue as error details.
fn issue_detail(i: &Issue, r: &Report) -> Detail {
    let mut m = vec![
        ("code".to_owned(), Detail::Str(i.code.as_str().to_owned())),
        ("message".to_owned(), Detail::Str(i.message.clone())),
        ("hint".to_owned(), Detail::Str(i.hint.clone())),
    ];
    if let Some(key) = i.node.and_then(|n| r.nodes[n].key.clone()) {
        m.push(("step".to_owned(), Detail::Str(key)));
    }
    if let Some(f) = &i.field {
        m.push(("field".to_owned(), Detail::Str(f.clone())));
    }
    Detail::Map(m)
}
