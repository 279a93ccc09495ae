//! Helpers of the end-to-end checks in `tests/tests/`: a [`TestStore`] (the
//! in-memory lens store, a fresh SQLite file from lf-store, or that file
//! served by a real lf-mcp-http on a loopback port) with a [`Caller`] over it
//! for any principal, a [`call`] that drives a tool through
//! `LfServer::call` (the whole `tools/call` path short of the transport) or
//! through `POST /mcp` with the principal's bearer token, and checks the
//! shape every result must have, and a [`Digest`] of everything a store
//! holds, to prove a refused call wrote nothing. Workflow runs are kept in
//! memory (the HTTP server's own run store over HTTP) and nothing runs
//! them: [`TestStore::end_run`] records an end as a runner would.
//!
//! [`readme`] reads the README's code blocks and tables for the tests that
//! hold it to the code. A [`Process`] is the servers' own wiring over a
//! SQLite file, for the tests that restart on one file.
//!
//! This crate knows no tool by name: the test files hold their own tables.

mod process;
pub mod readme;

pub use process::Process;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use lf_agent::{
    AgentFilter, AgentService, AgentStore, LenserHandles, MemoryAgentStore, MemoryLensers, TeamRunFilter,
};
use lf_battle::{BattleFilter, BattleService, BattleSheet, BattleStatus, BattleStore, MemoryBattleStore};
use lf_core::{LenserId, PageRequest, Principal, Reach, Scopes};
use lf_lens::{
    Lens, LensFilter, LensService, LensStore, LensVersion, MemoryLensStore, VersionSelector, VersionSummary,
};
use lf_tools::{Catalog, CatalogOptions, LfServer, Services};
use lf_workflow::engine::{RunError, RunStatus};
use lf_workflow::run::{MemoryRunStore, NoSignal, Run, RunFilter, RunId, RunStore};
use lf_workflow::{
    Connection, ConnectionLookup, ConnectionRef, ConnectionStore, MemoryConnections, MemoryWorkflowStore,
    Provider, SealedSecret, WorkflowFilter, WorkflowService, WorkflowStore,
};
use serde_json::Value;

/// Which store a test runs against, and how calls reach it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    Memory,
    Sqlite,
    /// SQLite behind lf-mcp-http: calls go over HTTP with bearer tokens.
    Http,
}

impl StoreKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            StoreKind::Memory => "memory",
            StoreKind::Sqlite => "sqlite",
            StoreKind::Http => "http",
        }
    }
}

enum Backing {
    Memory(Arc<MemoryLensStore>),
    Sqlite {
        db: Box<lf_store::Database>,
        http: Option<HttpServer>,
        // Dropped after `db`: the file outlives the pool.
        _dir: tempfile::TempDir,
    },
}

/// lf-mcp-http serving the test's SQLite file, and a token per lenser.
struct HttpServer {
    mcp_url: String,
    /// The server's run store, which the tests' own services share.
    runs: Arc<dyn RunStore>,
    auth: Arc<lf_auth::AuthService>,
    tokens: Mutex<HashMap<(LenserId, bool), String>>,
    client: reqwest::Client,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl HttpServer {
    async fn start(database_url: &str) -> HttpServer {
        let args = lf_mcp_http::ServeArgs {
            common: lf_server::CommonArgs {
                database_url: Some(database_url.to_owned()),
                ..Default::default()
            },
            bind: "127.0.0.1:0".into(),
            request_timeout: 60,
            ..Default::default()
        };
        let config = lf_mcp_http::HttpConfig::from_args(&args).expect("a valid HTTP configuration");
        let prepared = lf_mcp_http::prepare(config).await.expect("the HTTP server starts");
        let mcp_url = prepared.state.resource.to_string();
        let auth = prepared.state.auth.clone();
        let runs = prepared.state.server.services().runs.store().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(lf_mcp_http::serve(prepared, async move {
            let _ = stopped.await;
        }));
        HttpServer {
            mcp_url,
            runs,
            auth,
            tokens: Mutex::new(HashMap::new()),
            client: lf_model::client_builder().build().expect("an HTTP client"),
            _stop: stop,
        }
    }

    /// A bearer token of `id`, whose account is made on first use.
    async fn token(&self, id: LenserId, scopes: Scopes) -> String {
        let key = (id, scopes.write);
        if let Some(t) = self.tokens.lock().unwrap().get(&key) {
            return t.clone();
        }
        if self.auth.lenser(id).await.expect("reading an account").is_none() {
            let handle = format!("u{}", &id.as_uuid().simple().to_string()[20..]);
            let record = lf_auth::LenserRecord {
                lenser: lf_auth::Lenser {
                    id,
                    handle: lf_auth::Handle::parse(&handle).expect("a valid handle"),
                    created_at: lf_core::Timestamp::from_micros(0),
                },
                // These accounts only ever use tokens.
                password_hash: lf_auth::hash_password(
                    &lf_auth::Password::parse("a password nobody uses").expect("a valid password"),
                )
                .expect("hashing a password"),
            };
            self.auth.store().create_lenser(&record).await.expect("creating an account");
        }
        let new = lf_auth::NewToken { lenser: id, scopes, resource: None, ttl: None, label: None };
        let secret = self.auth.issue_token(new).await.expect("issuing a token").secret;
        self.tokens.lock().unwrap().insert(key, secret.clone());
        secret
    }
}

/// Who calls a tool, and how: in process through `LfServer::call`, or over
/// HTTP with a bearer token.
#[derive(Clone)]
pub enum Caller {
    Local(LfServer),
    Http { client: reqwest::Client, url: String, token: String },
}

impl From<&LfServer> for Caller {
    fn from(server: &LfServer) -> Self {
        Caller::Local(server.clone())
    }
}

impl From<LfServer> for Caller {
    fn from(server: LfServer) -> Self {
        Caller::Local(server)
    }
}

impl From<&Caller> for Caller {
    fn from(caller: &Caller) -> Self {
        caller.clone()
    }
}

/// A fresh, empty store and the services and catalog over it.
pub struct TestStore {
    store: Arc<dyn LensStore>,
    battles: Arc<dyn BattleStore>,
    workflows: Arc<dyn WorkflowStore>,
    connections: Arc<dyn ConnectionStore>,
    runs: Arc<dyn RunStore>,
    agents: Arc<dyn AgentStore>,
    /// The lensers' accounts of the in-memory store.
    accounts: Arc<MemoryLensers>,
    backing: Backing,
    catalog: Arc<Catalog>,
    services: Arc<Services>,
}

impl TestStore {
    /// A fresh store of `kind`; SQLite lives in a new temporary directory.
    pub async fn open(kind: StoreKind) -> TestStore {
        let (store, backing): (Arc<dyn LensStore>, Backing) = match kind {
            StoreKind::Memory => {
                let memory = Arc::new(MemoryLensStore::new());
                (memory.clone(), Backing::Memory(memory))
            }
            StoreKind::Sqlite | StoreKind::Http => {
                let dir = tempfile::tempdir().expect("a temporary directory for the SQLite file");
                let url = format!("sqlite://{}", dir.path().join("lenserfight.db").display());
                let db = lf_store::Database::connect(&url)
                    .await
                    .unwrap_or_else(|e| panic!("opening a fresh SQLite database at {url}: {e:?}"));
                let http = match kind {
                    StoreKind::Http => Some(HttpServer::start(&url).await),
                    _ => None,
                };
                (db.lens_store(), Backing::Sqlite { db: Box::new(db), http, _dir: dir })
            }
        };
        let battles: Arc<dyn BattleStore> = match &backing {
            Backing::Memory(_) => Arc::new(MemoryBattleStore::new()),
            Backing::Sqlite { db, .. } => db.battle_store(),
        };
        let (workflows, connections, lookup): (
            Arc<dyn WorkflowStore>,
            Arc<dyn ConnectionStore>,
            Arc<dyn ConnectionLookup>,
        ) = match &backing {
            Backing::Memory(_) => {
                let connections = Arc::new(MemoryConnections::new());
                (Arc::new(MemoryWorkflowStore::new()), connections.clone(), connections)
            }
            Backing::Sqlite { db, .. } => {
                (db.workflow_store(), db.connection_store(), db.connection_lookup())
            }
        };
        let runs: Arc<dyn RunStore> = match &backing {
            Backing::Sqlite { http: Some(http), .. } => http.runs.clone(),
            _ => Arc::new(MemoryRunStore::new()),
        };
        let accounts = Arc::new(MemoryLensers::new());
        let (agents, lensers): (Arc<dyn AgentStore>, Arc<dyn LenserHandles>) = match &backing {
            Backing::Memory(_) => (Arc::new(MemoryAgentStore::new()), accounts.clone()),
            Backing::Sqlite { db, .. } => (db.agent_store(), db.lenser_handles()),
        };
        // Contender references are checked as the server checks them.
        let own = lf_runner::OwnServices::new();
        let agent_service = AgentService::new(agents.clone(), lensers);
        let lens = LensService::new(store.clone());
        let workflow = WorkflowService::new(
            workflows.clone(),
            Arc::new(lf_server::WorkflowLenses::new(lens.clone())),
            lookup,
        );
        let services = Arc::new(
            Services::builder()
                .lens(lens)
                .battle(BattleService::new(battles.clone()).with_contender_refs(Arc::new(own.clone())))
                .workflow(workflow)
                // Nothing here seals a secret: connections are saved straight into the store.
                .connections(lf_workflow::ConnectionService::new(
                    connections.clone(),
                    Arc::new(lf_server::KeySealer::new(None)),
                ))
                .runs(runs.clone(), Arc::new(NoSignal))
                .agents(agent_service)
                .build(),
        );
        let stopping = tokio_util::sync::CancellationToken::new();
        own.bind(services.runs.clone(), services.battle.clone(), workflows.clone(), stopping);
        own.bind_agents(services.agents.clone());
        TestStore {
            store,
            accounts,
            battles,
            workflows,
            connections,
            runs,
            agents,
            backing,
            catalog: Arc::new(Catalog::new()),
            services,
        }
    }

    pub fn store(&self) -> &Arc<dyn LensStore> {
        &self.store
    }

    /// Makes lenser `id`'s account, as signing up would (a human
    /// contender names one).
    pub async fn account(&self, id: LenserId) {
        let handle = format!("u{}", &id.as_uuid().simple().to_string()[20..]);
        match &self.backing {
            Backing::Memory(_) => self.accounts.add(id, &handle),
            Backing::Sqlite { db, .. } => {
                let record = lf_auth::LenserRecord {
                    lenser: lf_auth::Lenser {
                        id,
                        handle: lf_auth::Handle::parse(&handle).expect("a valid handle"),
                        created_at: lf_core::Timestamp::from_micros(0),
                    },
                    password_hash: lf_auth::NO_PASSWORD.to_owned(),
                };
                db.auth_store().create_lenser(&record).await.expect("creating an account");
            }
        }
    }

    /// The agent store the services use.
    pub fn agents(&self) -> &Arc<dyn AgentStore> {
        &self.agents
    }

    pub fn battles(&self) -> &Arc<dyn BattleStore> {
        &self.battles
    }

    /// The workflow store the services write to.
    pub fn workflows(&self) -> &Arc<dyn WorkflowStore> {
        &self.workflows
    }

    /// Whether a runner runs this store's workflow runs (over HTTP: the
    /// server's own), so that a run moves on by itself.
    pub fn runs_itself(&self) -> bool {
        matches!(&self.backing, Backing::Sqlite { http: Some(_), .. })
    }

    /// The run store the services (and, over HTTP, the server) write to.
    pub fn runs(&self) -> &Arc<dyn RunStore> {
        &self.runs
    }

    /// Ends run `id` as `status` (failed or cancelled, say), as its runner
    /// would: claims what is due, writes this run's end and gives the
    /// others back unchanged.
    pub async fn end_run(&self, id: &str, status: RunStatus) {
        let id = RunId::parse("run_id", id).expect("a run id");
        let now = lf_core::Timestamp::from_micros(i64::MAX / 2);
        let leases = self
            .runs
            .claim("tests", now, 60_000, &lf_workflow::run::Room::up_to(10_000))
            .await
            .expect("claiming runs");
        assert!(leases.iter().any(|l| l.run == id), "run {id} is not due: has it ended?");
        for lease in leases {
            let mut state = self.runs.load_run(lease.run).await.expect("a claimed run").state;
            if lease.run == id {
                let at = lf_core::Timestamp::from_micros(1_767_225_600_000_000);
                state.status = status;
                (state.started_at, state.finished_at) = (Some(at), Some(at));
                state.error = Some(RunError {
                    code: status.as_str().to_owned(),
                    message: format!("ended as {status} by the test"),
                    node: None,
                });
            }
            state.slots.clear();
            assert!(self.runs.save(&lease, &state, &[], true).await.expect("saving a run"), "lost {id}");
        }
    }

    /// Saves a connection of `owner` in the store (its ref and provider;
    /// workflows only ask whether it is saved, so its sealed secret is
    /// empty), as `connection add` would.
    pub async fn save_connection(&self, owner: LenserId, provider: &str, connection_ref: &str) {
        let connection = Connection {
            owner,
            connection_ref: ConnectionRef::parse("connection_ref", connection_ref).expect("a valid ref"),
            provider: Provider::parse("provider", provider).expect("a valid provider"),
            settings: serde_json::Map::new(),
            created_at: lf_core::Timestamp::from_micros(0),
        };
        self.connections
            .add_connection(&connection, &SealedSecret::from_bytes(Vec::new()))
            .await
            .expect("saving a connection");
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// A server with every tool enabled (opt-in groups too), calling as `principal`.
    pub fn server(&self, principal: Principal) -> LfServer {
        let every =
            CatalogOptions { toolsets: Some(lf_tools::Group::all().to_vec()), ..CatalogOptions::default() };
        LfServer::new(self.catalog.clone(), self.services.clone(), every, principal)
    }

    /// Who calls as `principal`: in process, or for [`StoreKind::Http`] over
    /// HTTP with a token of the principal's own (only lensers sign in there).
    pub async fn caller(&self, principal: Principal) -> Caller {
        match &self.backing {
            Backing::Sqlite { http: Some(http), .. } => {
                let Principal::Lenser { id, scopes } = principal else {
                    panic!("over HTTP every caller is a lenser, not {principal:?}")
                };
                let token = http.token(id, scopes).await;
                Caller::Http { client: http.client.clone(), url: http.mcp_url.clone(), token }
            }
            _ => Caller::Local(self.server(principal)),
        }
    }

    /// How many tracked runs the store holds.
    pub async fn run_count(&self) -> u64 {
        match &self.backing {
            Backing::Memory(m) => m.runs().len() as u64,
            Backing::Sqlite { db, .. } => {
                let pool = db.sqlite_pool().expect("a SQLite database has a SQLite pool");
                let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM lens_runs")
                    .fetch_one(pool)
                    .await
                    .expect("counting lens_runs");
                n as u64
            }
        }
    }

    /// Everything the store holds that any tool can see or change: every
    /// non-deleted lens (archived ones included) with all its versions, the
    /// number of tracked runs, every battle (archived ones included) with
    /// its whole sheet, and every workflow (archived ones included) with
    /// its versions.
    pub async fn digest(&self) -> Digest {
        let mut lenses = Vec::new();
        for lens in all_lenses(self.store.as_ref(), Reach::Everything).await {
            let versions = self
                .store
                .list_versions(Reach::Everything, lens.id)
                .await
                .expect("listing the versions of a listed lens");
            lenses.push((lens, versions));
        }
        lenses.sort_by_key(|(l, _)| l.id);
        let mut battles = Vec::new();
        for summary in all_battles(self.battles.as_ref()).await {
            let sheet = self
                .battles
                .get_sheet(Reach::Everything, summary.battle.id)
                .await
                .expect("reading the sheet of a listed battle");
            battles.push(sheet);
        }
        battles.sort_by_key(|s| s.battle.id.to_string());
        let mut workflows = Vec::new();
        for w in all_workflows(self.workflows.as_ref(), Reach::Everything).await {
            let versions = self
                .workflows
                .list_versions(Reach::Everything, w.id)
                .await
                .expect("listing the versions of a listed workflow");
            workflows.push((w, versions));
        }
        workflows.sort_by_key(|(w, _)| w.id);
        let mut workflow_runs = Vec::new();
        for (w, _) in &workflows {
            workflow_runs.extend(all_runs(self.runs.as_ref(), w.id).await);
        }
        let mut agents = Vec::new();
        let filter = AgentFilter { include_archived: true, ..AgentFilter::default() };
        let page = PageRequest::within(Some(500), None, 500, 500).expect("a valid page");
        let listed = self.agents.list_agents(Reach::Everything, &filter, page).await.expect("listing agents");
        for agent in listed.items {
            let grants = self
                .agents
                .list_grants(Reach::Everything, agent.id, page)
                .await
                .expect("listing grants")
                .items;
            let runs = self
                .agents
                .list_team_runs(Reach::Everything, agent.id, &TeamRunFilter::default(), page)
                .await
                .expect("listing team runs")
                .items;
            let events = self
                .agents
                .list_events(Reach::Everything, agent.id, &lf_agent::EventFilter::default(), page)
                .await
                .expect("listing team-run events")
                .total;
            agents.push(AgentDigest { agent, grants, team_runs: runs, events });
        }
        agents.sort_by_key(|a| a.agent.id);
        Digest { lenses, runs: self.run_count().await, battles, workflows, workflow_runs, agents }
    }
}

/// Every battle of the store, archived ones included: archived battles are
/// listed only when the filter asks for them, so two listings.
pub async fn all_battles(store: &dyn BattleStore) -> Vec<lf_battle::BattleSummary> {
    let mut out = Vec::new();
    for status in [None, Some(BattleStatus::Archived)] {
        let filter = BattleFilter { status, ..BattleFilter::default() };
        let mut got_here = 0;
        loop {
            let page = PageRequest::new(Some(100), Some(got_here)).expect("a valid page");
            let got = store.list_battles(Reach::Everything, &filter, page).await.expect("listing battles");
            let more = got.has_more() && !got.items.is_empty();
            got_here += got.items.len() as i64;
            out.extend(got.items);
            if !more {
                break;
            }
        }
    }
    out
}

/// Every workflow within `reach`, archived ones included, paged through
/// the store.
pub async fn all_workflows(store: &dyn WorkflowStore, reach: Reach) -> Vec<lf_workflow::Workflow> {
    let filter = WorkflowFilter { include_archived: true, ..WorkflowFilter::default() };
    let mut out = Vec::new();
    loop {
        let page = PageRequest::new(Some(100), Some(out.len() as i64)).expect("a valid page");
        let got = store.list_workflows(reach, &filter, page).await.expect("listing workflows");
        let more = got.has_more() && !got.items.is_empty();
        out.extend(got.items);
        if !more {
            return out;
        }
    }
}

/// Every run of `workflow`, newest first, with its node results.
pub async fn all_runs(store: &dyn RunStore, workflow: lf_core::WorkflowId) -> Vec<Run> {
    let filter = RunFilter { workflow_id: Some(workflow), status: None, ..Default::default() };
    let mut out = Vec::new();
    loop {
        let page = PageRequest::new(Some(100), Some(out.len() as i64)).expect("a valid page");
        // With a workflow in the filter, whoever lists sees all its runs.
        let got = store.list_runs(LenserId::new(), &filter, page).await.expect("listing runs");
        let more = got.has_more() && !got.items.is_empty();
        for run in got.items {
            out.push(store.load_run(run.id).await.expect("a listed run"));
        }
        if !more {
            return out;
        }
    }
}

/// Every non-deleted lens within `reach`, archived ones included, paged
/// through the store.
pub async fn all_lenses(store: &dyn LensStore, reach: Reach) -> Vec<Lens> {
    let filter = LensFilter { include_archived: true, ..LensFilter::default() };
    let mut out = Vec::new();
    loop {
        let page = PageRequest::new(Some(100), Some(out.len() as i64)).expect("a valid page");
        let got = store.list_lenses(reach, &filter, page).await.expect("listing lenses");
        let more = got.has_more() && !got.items.is_empty();
        out.extend(got.items);
        if !more {
            return out;
        }
    }
}

/// Every version of a lens, with its body.
pub async fn all_versions(store: &dyn LensStore, lens: &Lens) -> Vec<LensVersion> {
    let mut out = Vec::new();
    for v in store.list_versions(Reach::Everything, lens.id).await.expect("listing versions") {
        out.push(
            store
                .get_version(Reach::Everything, lens.id, VersionSelector::Id(v.id))
                .await
                .expect("a listed version"),
        );
    }
    out
}

/// What a store holds, compared before and after a call.
#[derive(Clone, PartialEq)]
pub struct Digest {
    pub lenses: Vec<(Lens, Vec<VersionSummary>)>,
    pub runs: u64,
    /// Every battle's sheet, by id.
    pub battles: Vec<BattleSheet>,
    /// Every workflow with its versions, by id.
    pub workflows: Vec<(lf_workflow::Workflow, Vec<lf_workflow::VersionSummary>)>,
    /// Every workflow run, by workflow, with its node results.
    pub workflow_runs: Vec<Run>,
    /// Every agent (archived ones included) with its grants and team runs.
    /// Its action log and day counts are left out: every call an agent
    /// makes is logged and counted, refused or not.
    pub agents: Vec<AgentDigest>,
}

/// One agent as a [`Digest`] holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentDigest {
    pub agent: lf_agent::Agent,
    pub grants: Vec<lf_agent::Grant>,
    pub team_runs: Vec<lf_agent::TeamRun>,
    /// How many events its team runs have.
    pub events: u64,
}

impl Digest {
    /// What changed from `self` to `after`, in a few lines.
    pub fn changes(&self, after: &Digest) -> Vec<String> {
        let mut out = Vec::new();
        if self.runs != after.runs {
            out.push(format!("runs {} -> {}", self.runs, after.runs));
        }
        for (lens, versions) in &self.lenses {
            match after.lenses.iter().find(|(l, _)| l.id == lens.id) {
                None => out.push(format!("lens {} disappeared", lens.id)),
                Some((l, v)) => {
                    if l != lens {
                        out.push(format!("lens {} changed: {lens:?} -> {l:?}", lens.id));
                    }
                    if v != versions {
                        out.push(format!("lens {} versions {} -> {}", lens.id, versions.len(), v.len()));
                    }
                }
            }
        }
        for (lens, _) in &after.lenses {
            if !self.lenses.iter().any(|(l, _)| l.id == lens.id) {
                out.push(format!("lens {} appeared", lens.id));
            }
        }
        for sheet in &self.battles {
            let id = sheet.battle.id;
            match after.battles.iter().find(|s| s.battle.id == id) {
                None => out.push(format!("battle {id} disappeared")),
                Some(s) => out.extend(battle_changes(sheet, s)),
            }
        }
        for sheet in &after.battles {
            if !self.battles.iter().any(|s| s.battle.id == sheet.battle.id) {
                out.push(format!("battle {} appeared ({})", sheet.battle.id, sheet.battle.status));
            }
        }
        for (w, versions) in &self.workflows {
            match after.workflows.iter().find(|(a, _)| a.id == w.id) {
                None => out.push(format!("workflow {} disappeared", w.id)),
                Some((a, v)) => {
                    if a != w {
                        out.push(format!("workflow {} changed: {} -> {}", w.id, cut(w), cut(a)));
                    }
                    if v != versions {
                        out.push(format!("workflow {} versions {} -> {}", w.id, versions.len(), v.len()));
                    }
                }
            }
        }
        for (w, _) in &after.workflows {
            if !self.workflows.iter().any(|(b, _)| b.id == w.id) {
                out.push(format!("workflow {} appeared", w.id));
            }
        }
        for run in &self.workflow_runs {
            match after.workflow_runs.iter().find(|r| r.id == run.id) {
                None => out.push(format!("workflow run {} disappeared", run.id)),
                Some(r) if r != run => {
                    out.push(format!("workflow run {} changed: {} -> {}", run.id, cut(run), cut(r)))
                }
                Some(_) => {}
            }
        }
        for run in &after.workflow_runs {
            if !self.workflow_runs.iter().any(|r| r.id == run.id) {
                out.push(format!("workflow run {} appeared ({})", run.id, run.status()));
            }
        }
        for a in &self.agents {
            match after.agents.iter().find(|b| b.agent.id == a.agent.id) {
                None => out.push(format!("agent {} disappeared", a.agent.id)),
                Some(b) if b != a => {
                    out.push(format!("agent {} changed: {} -> {}", a.agent.id, cut(a), cut(b)))
                }
                Some(_) => {}
            }
        }
        for b in &after.agents {
            if !self.agents.iter().any(|a| a.agent.id == b.agent.id) {
                out.push(format!("agent {} appeared (@{})", b.agent.id, b.agent.handle));
            }
        }
        out
    }
}

/// What changed in one battle's sheet, part by part.
fn battle_changes(before: &BattleSheet, after: &BattleSheet) -> Vec<String> {
    let id = before.battle.id;
    let mut out = Vec::new();
    if before.battle != after.battle {
        if before.battle.status != after.battle.status {
            out.push(format!("battle {id} status {} -> {}", before.battle.status, after.battle.status));
        } else {
            out.push(format!("battle {id} changed: {} -> {}", cut(&before.battle), cut(&after.battle)));
        }
    }
    let counts = |s: &BattleSheet| {
        [
            s.contenders.len(),
            s.submissions.len(),
            s.votes.total as usize,
            s.verdicts.len(),
            s.judge_errors.len(),
            s.standings.len(),
        ]
    };
    let names = ["contenders", "submissions", "votes", "verdicts", "judge errors", "standings"];
    for ((name, b), a) in names.iter().zip(counts(before)).zip(counts(after)) {
        if b != a {
            out.push(format!("battle {id} {name} {b} -> {a}"));
        }
    }
    if out.is_empty() && before != after {
        out.push(format!("battle {id} sheet changed: {} -> {}", cut(before), cut(after)));
    }
    out
}

/// The Debug form of `v`, cut to a few hundred characters.
fn cut(v: &impl fmt::Debug) -> String {
    let s = format!("{v:?}");
    let short: String = s.chars().take(400).collect();
    if short.len() < s.len() { format!("{short}…") } else { short }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Digest({} lenses, {} runs, {} battles, {} workflows, {} workflow runs, {} agents)",
            self.lenses.len(),
            self.runs,
            self.battles.len(),
            self.workflows.len(),
            self.workflow_runs.len(),
            self.agents.len()
        )
    }
}

/// A lenser calling over HTTP with a read-write token.
pub fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

/// A tool's answer, already checked for the shape every result has.
#[derive(Clone, Debug)]
pub struct Reply {
    pub is_error: bool,
    /// `structuredContent`.
    pub value: Value,
    /// Every text block, `content[0]` (the JSON of `value`) first.
    pub texts: Vec<String>,
}

impl Reply {
    /// The error code of an error result.
    pub fn code(&self) -> Option<&str> {
        if self.is_error { self.value.get("code").and_then(Value::as_str) } else { None }
    }

    pub fn message(&self) -> &str {
        self.value.get("message").and_then(Value::as_str).unwrap_or("")
    }

    /// `details.field` of an error result.
    pub fn field(&self) -> Option<&str> {
        self.value.get("details").and_then(|d| d.get("field")).and_then(Value::as_str)
    }

    /// Bytes of every text block together.
    pub fn text_len(&self) -> usize {
        self.texts.iter().map(String::len).sum()
    }

    /// Whether any text block contains `needle`.
    pub fn contains(&self, needle: &str) -> bool {
        self.texts.iter().any(|t| t.contains(needle))
    }

    /// `value[key]` as a string.
    pub fn str(&self, key: &str) -> &str {
        self.value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no string {key} in {}", self.value))
    }

    /// A one-line description for failure reports, at most a few hundred characters.
    pub fn brief(&self) -> String {
        let s = self.texts.first().map_or("", String::as_str);
        let cut: String = s.chars().take(300).collect();
        if cut.len() < s.len() { format!("{cut}… ({} bytes)", s.len()) } else { cut }
    }
}

/// Calls `tool` as `caller` with `args` (a JSON object): through
/// `LfServer::call` in a task of its own so a panic is reported rather than
/// unwinding the test, or as `tools/call` over HTTP. `Err` says what was
/// wrong with the answer itself: an HTTP or JSON-RPC error, a panic, no
/// structured content, or a first text block that is not the JSON of the
/// structured content.
pub async fn call(caller: impl Into<Caller>, tool: &str, args: Value) -> Result<Reply, String> {
    let (value, texts, is_error) = match caller.into() {
        Caller::Local(server) => call_local(server, tool, args).await?,
        Caller::Http { client, url, token } => call_http(&client, &url, &token, tool, args).await?,
    };
    let first = texts.first().ok_or("no text block")?;
    let mirrored: Value = serde_json::from_str(first).map_err(|_| "content[0].text is not JSON")?;
    if mirrored != value {
        return Err("content[0].text is not the JSON of structuredContent".to_owned());
    }
    Ok(Reply { is_error, value, texts })
}

/// structuredContent, the text blocks and isError of a tool result.
type Answer = (Value, Vec<String>, bool);

async fn call_local(server: LfServer, tool: &str, args: Value) -> Result<Answer, String> {
    let Value::Object(args) = args else { panic!("tool arguments must be a JSON object") };
    let name = tool.to_owned();
    let answer = tokio::spawn(async move { server.call(&name, args).await }).await;
    let result = match answer {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => return Err(format!("JSON-RPC error instead of a tool result: {}", e.message)),
        Err(e) if e.is_panic() => return Err("the call panicked".to_owned()),
        Err(e) => return Err(format!("the call's task failed: {e}")),
    };
    let value = result.structured_content.clone().ok_or("no structuredContent")?;
    let texts = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    Ok((value, texts, result.is_error == Some(true)))
}

async fn call_http(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    tool: &str,
    args: Value,
) -> Result<Answer, String> {
    let request = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": args }
    });
    let response = client
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&request)
        .send()
        .await
        .map_err(|e| format!("the HTTP request failed: {e}"))?;
    let status = response.status();
    let body: Value = response.json().await.map_err(|e| format!("HTTP {status} without a JSON body: {e}"))?;
    if !status.is_success() {
        return Err(format!("HTTP {status}: {body}"));
    }
    if let Some(e) = body.get("error") {
        return Err(format!("JSON-RPC error instead of a tool result: {e}"));
    }
    let result = body.get("result").ok_or("no result")?;
    let value = result.get("structuredContent").cloned().ok_or("no structuredContent")?;
    let texts = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str).map(str::to_owned)).collect()
        })
        .unwrap_or_default();
    Ok((value, texts, result.get("isError") == Some(&Value::Bool(true))))
}

/// The `id`s of `value["items"]`.
pub fn item_ids(value: &Value) -> Vec<String> {
    value
        .get("items")
        .and_then(Value::as_array)
        .map(|items| {
            items.iter().filter_map(|i| i.get("id").and_then(Value::as_str).map(str::to_owned)).collect()
        })
        .unwrap_or_default()
}
