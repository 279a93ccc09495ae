//! Opening the database and wiring its stores into the domain services and
//! the catalog's server.

use std::sync::Arc;

use lf_agent::{AgentService, LedgerSettings};
use lf_battle::BattleService;
use lf_core::{ModelProvider, Principal, Spawner};
use lf_egress::{Egress, EgressConfig};
use lf_eval::dataset::DatasetService;
use lf_eval::experiment::{ExperimentRatings, ExperimentService};
use lf_lens::LensService;
use lf_runner::{Executors, OwnServices, Runner, Scheduler, StepNeeds};
use lf_store::Database;
use lf_tools::{Catalog, CatalogOptions, LfServer, Services};
use lf_workflow::profile::{OperatorEndpoint, ProfileService};
use lf_workflow::{ConnectionService, EgressRefusal, LensLookup, WorkflowService};

use crate::agent_ledger::AgentLedger;
use crate::agent_tools::CatalogTools;
use crate::config::{Config, RunSettings};
use crate::file::FromFile;
use crate::lenses::WorkflowLenses;
use crate::models::Resolver;
use crate::sealer::KeySealer;
use crate::settings::{ConfigError, Setting};

/// Opens the database the configuration names, applying migrations. A
/// database that cannot be opened is an error naming
/// `LENSERFIGHT_DATABASE_URL`.
pub async fn open_database(config: &Config) -> Result<Database, ConfigError> {
    connect(&config.database_url, &config.from_file).await
}

pub(crate) async fn connect(url: &str, from_file: &FromFile) -> Result<Database, ConfigError> {
    Database::connect(url).await.map_err(|e| from_file.bad(Setting::DatabaseUrl, e.message()))
}

/// The catalog's server, the workflow runner that runs what its
/// `run_workflow` starts, and the agents' call ledger. The binary starts
/// the runner ([`Runner::start`]) and the ledger ([`AgentLedger::start`]),
/// and, once the transport stopped, shuts the runner down
/// ([`Runner::shutdown`]) and closes the ledger ([`AgentLedger::close`])
/// before it closes the database.
pub struct Built {
    pub server: LfServer,
    pub runner: Runner,
    pub ledger: AgentLedger,
}

/// The domain services over `db`'s stores, with `model` behind every model
/// call and background work (judging battles) on `spawner`, and the
/// workflow runner over the same stores: the one place where stores meet
/// services, and where the spawner is handed to them. `sealer` seals saved
/// connections' secrets (the tools never see one).
pub fn services(
    db: &Database,
    model: Arc<dyn ModelProvider>,
    spawner: Arc<dyn Spawner>,
    sealer: KeySealer,
    runs: &RunSettings,
) -> (Arc<Services>, Runner) {
    // What the catalog, the runner and the model client do is counted
    // from here on (once per process).
    lf_metrics::install();
    // Heard by the workflows that follow events, once the services exist.
    let own = OwnServices::new();
    let lens = LensService::new(db.lens_store()).with_events(Arc::new(own.clone()));
    let workflow = workflow_service(db, Arc::new(WorkflowLenses::new(lens.clone())))
        .with_egress_policy(Arc::new(EgressRules(runs.egress_allow.clone())));
    let connections = connection_service(db, sealer).with_mcp(mcp_servers(&runs.egress_allow));
    let rules: Arc<dyn lf_workflow::EgressPolicy> = Arc::new(EgressRules(runs.egress_allow.clone()));
    let endpoints =
        runs.models.clone().unwrap_or_else(|| Arc::new(lf_model::Endpoints::new(model.clone(), None)));
    let operator =
        endpoints.listed().into_iter().map(|(name, model)| OperatorEndpoint { name, model }).collect();
    let profiles = ProfileService::new(db.profile_store(), db.connection_store())
        .with_operator(operator)
        .with_egress(rules.clone());
    // Profiles' connections are looked up through the egress guard, as
    // the runner's outbound steps' hosts are.
    let dns = lf_egress::guarded_dns(runs.egress_allow.clone(), Arc::new(lf_egress::SystemResolver));
    let resolver = Arc::new(Resolver::new(profiles.clone(), endpoints, connections.clone(), rules, dns));
    // ai_model contenders' models, asked on the runner under its lease.
    let asks = lf_runner::ModelAsks::new(own.clone(), db.ask_store(), resolver.clone(), runs.runner.lease);
    // Experiments' cells, asked on the runner under their leases; the
    // experiments left running by a process that stopped are taken up.
    // AI Lensers, lens versions and workflows answer too (through `own`).
    let kinds = lf_runner::ExperimentContenders::new(own.clone(), lens.clone(), resolver.clone());
    let cells = lf_runner::ExperimentCells::new(
        db.experiment_store(),
        db.dataset_store(),
        resolver.clone(),
        runs.pricing,
        runs.runner.lease,
    )
    .with_validator(Arc::new(lf_tools::JsonSchemaCheck))
    .with_contenders(kinds.clone());
    cells.resume();
    let experiments = ExperimentService::new(db.experiment_store(), db.dataset_store())
        .with_runner(Arc::new(cells))
        .with_resolver(resolver.clone())
        .with_contender_check(Arc::new(kinds));
    let egress = Egress::new(EgressConfig { allow: runs.egress_allow.clone(), ..EgressConfig::default() })
        .expect("the outbound HTTP client builds with the default TLS settings");
    // The tools an agent step calls, and the battle answers a contender
    // step asks for, are the catalog's, over the services made below
    // (bound once they exist).
    let agent_tools = CatalogTools::new();
    let executors = Executors::all(StepNeeds {
        model: model.clone(),
        pricing: runs.pricing,
        lenses: lens.clone(),
        egress,
        connections: Arc::new(connections.clone()),
        kv: db.kv_store(),
        agent_tools: Arc::new(agent_tools.clone()),
        own: own.clone(),
        third_party: Arc::new(CatalogHygiene),
    });
    let can_run = executors.clone();
    let run_store = db.run_store();
    let runner = Runner::new(run_store.clone(), db.workflow_store(), executors, runs.runner.clone());
    let services = Services::builder()
        .lens(lens)
        .battle(
            BattleService::new(db.battle_store())
                .with_events(Arc::new(own.clone()))
                .with_workflow_answers(Arc::new(own.clone()))
                .with_model_answers(Arc::new(asks))
                .with_contender_refs(Arc::new(own.clone()))
                .with_resolver(resolver.clone())
                // Experiments' judged pairwise verdicts are rated beside
                // closed battles (lf-eval's experiment::ratings).
                .with_more_results(Arc::new(ExperimentRatings::new(db.experiment_store()))),
        )
        .workflow(workflow)
        .runs(run_store, runner.signal())
        .run_defaults(runs.defaults)
        .runnable(Arc::new(move |t: &str| can_run.handles(t)))
        .connections(connections)
        .profiles(profiles.clone())
        .datasets(DatasetService::new(db.dataset_store()))
        .experiments(experiments)
        .agents(
            AgentService::new(db.agent_store(), db.lenser_handles())
                .with_limits(runs.agents)
                .with_dispatch(Arc::new(own.clone()))
                .with_ledger(LedgerSettings::default()),
        )
        .model(model)
        .spawner(spawner)
        .build();
    let services = Arc::new(services);
    agent_tools.bind(services.clone());
    runner.schedule(Scheduler::new(db.workflow_store(), services.runs.clone()));
    own.bind(services.runs.clone(), services.battle.clone(), db.workflow_store(), runner.stopping());
    own.bind_agents(services.agents.clone());
    own.bind_profiles(profiles);
    own.bind_resolver(resolver);
    runner.on_end(Arc::new(own));
    (services, runner)
}

/// The catalog's server over `db`: [`services`] with the configuration's
/// model, its tools on as `options` says, calling as `principal`, and the
/// runner behind it.
pub fn build_server(
    db: &Database,
    model: Arc<dyn ModelProvider>,
    spawner: Arc<dyn Spawner>,
    options: CatalogOptions,
    principal: Principal,
    sealer: KeySealer,
    runs: &RunSettings,
) -> Built {
    let (services, runner) = services(db, model, spawner, sealer, runs);
    let ledger = AgentLedger::new(services.agents.clone());
    Built { server: LfServer::new(Arc::new(Catalog::new()), services, options, principal), runner, ledger }
}

/// The workflow use cases over `db`'s workflows, saved connections and
/// webhook secrets,
/// asking `lenses` about the lenses lens steps run ([`WorkflowLenses`]
/// over `LensService`).
pub fn workflow_service(db: &Database, lenses: Arc<dyn LensLookup>) -> WorkflowService {
    WorkflowService::new(db.workflow_store(), lenses, db.connection_lookup())
        .with_webhooks(db.webhook_store())
}

/// The egress guard's policy, under the allow-list the runner's HTTP steps
/// are sent with, as the workflow validator asks for it: what lf-egress
/// refuses of a URL before any lookup, and the allow-list entry that opens
/// it.
#[derive(Debug)]
struct EgressRules(lf_egress::Allow);

impl lf_workflow::EgressPolicy for EgressRules {
    fn refusal(&self, url: &str) -> Option<EgressRefusal> {
        let url = lf_egress::Url::parse(url).ok()?;
        let reason = lf_egress::refused_without_lookup(&url, &self.0)?;
        let host = url.host_str()?.trim_start_matches('[').trim_end_matches(']');
        let opened_by =
            (reason != lf_egress::METADATA_REASON).then(|| format!("{}={host}", lf_egress::ALLOW_KEY));
        Some(EgressRefusal { reason: reason.to_owned(), opened_by })
    }
}

/// The catalog's hygiene of third-party content and its JSON Schema check,
/// for the `mcp_tool` steps (lf-runner knows no catalog).
struct CatalogHygiene;

impl lf_runner::ThirdParty for CatalogHygiene {
    fn clean(&self, value: &mut serde_json::Value) -> Option<String> {
        let reasons = lf_tools::clean_value(value);
        (!reasons.is_empty()).then(|| lf_tools::injection_note(&reasons))
    }

    fn check(&self, schema: &serde_json::Value, instance: &serde_json::Value) -> Result<(), String> {
        use lf_battle::JsonSchemaValidator;
        lf_tools::JsonSchemaCheck.validate(&schema.to_string(), &instance.to_string())
    }
}

/// The saved-connection use cases over `db`, secrets sealed by `sealer`
/// ([`Config::sealer`]: under `LENSERFIGHT_SECRET_KEY`, else the key file,
/// read or made the first time a secret is sealed or opened).
pub fn connection_service(db: &Database, sealer: KeySealer) -> ConnectionService {
    ConnectionService::new(db.connection_store(), Arc::new(sealer))
}

/// The client saving a connection of provider `mcp` speaks to its server
/// with, and an agent calls its tools with: lf-runner's, through the
/// egress guard under `allow`, as the `mcp_tool` steps reach it.
pub fn mcp_servers(allow: &lf_egress::Allow) -> Arc<dyn lf_workflow::connection::McpServers> {
    let egress = Egress::new(EgressConfig { allow: allow.clone(), ..EgressConfig::default() })
        .expect("the outbound HTTP client builds with the default TLS settings");
    Arc::new(lf_runner::McpCalls::new(lf_runner::McpClient::new(egress), Arc::new(CatalogHygiene)))
}
