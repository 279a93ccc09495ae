//! The domain services the tools call, built once by the composition root.

use std::sync::Arc;

use lf_agent::{AgentService, MemoryAgentStore, NoLensers};
use lf_battle::BattleService;
use lf_core::{ModelProvider, Principal, Spawner};
use lf_eval::dataset::{DatasetService, MemoryDatasets};
use lf_eval::experiment::{ExperimentService, MemoryExperiments};
use lf_lens::LensService;
use lf_workflow::profile::{MemoryProfiles, ProfileService};
use lf_workflow::run::{
    AgentCredits, CreditsLeft, MemoryRunStore, NoSignal, RunDefaults, RunId, RunService, RunSignal, RunStore,
    Runnable,
};
use lf_workflow::{ConnectionService, WorkflowService};

/// The domain services the tools call, and the model provider behind them.
/// Build it with [`Services::builder`].
pub struct Services {
    pub lens: LensService,
    pub battle: Arc<BattleService>,
    pub workflow: Arc<WorkflowService>,
    /// Workflow runs: started, read, cancelled and retried here, run by
    /// whatever runner claims from [`RunService::store`].
    pub runs: Arc<RunService>,
    /// Saved connections (listed to their owner; the catalog never handles a secret).
    pub connections: ConnectionService,
    /// AI Lensers: their profiles, grants, caps, action log and team runs.
    pub agents: Arc<AgentService>,
    /// Model profiles, and what a name given as a model means.
    pub profiles: ProfileService,
    /// Datasets: versioned cases that experiments ask contenders.
    pub datasets: DatasetService,
    /// Experiments: every contender asked every case of a dataset version.
    pub experiments: ExperimentService,
}

impl Services {
    /// A builder: give it every service, and optionally the model provider
    /// and where background work runs.
    pub fn builder() -> ServicesBuilder {
        ServicesBuilder::default()
    }

    /// The model provider every model call goes through.
    pub fn model(&self) -> &Arc<dyn ModelProvider> {
        self.battle.provider()
    }
}

/// Builds [`Services`]. Every service is required; [`build`](Self::build)
/// names the first one missing.
#[derive(Default)]
#[must_use]
pub struct ServicesBuilder {
    lens: Option<LensService>,
    battle: Option<BattleService>,
    workflow: Option<WorkflowService>,
    connections: Option<ConnectionService>,
    agents: Option<AgentService>,
    profiles: Option<ProfileService>,
    datasets: Option<DatasetService>,
    experiments: Option<ExperimentService>,
    runs: Option<(Arc<dyn RunStore>, Arc<dyn RunSignal>)>,
    run_defaults: RunDefaults,
    runnable: Option<Runnable>,
    model: Option<Arc<dyn ModelProvider>>,
    spawner: Option<Arc<dyn Spawner>>,
}

impl ServicesBuilder {
    pub fn lens(self, lens: LensService) -> Self {
        Self { lens: Some(lens), ..self }
    }

    pub fn battle(self, battle: BattleService) -> Self {
        Self { battle: Some(battle), ..self }
    }

    pub fn workflow(self, workflow: WorkflowService) -> Self {
        Self { workflow: Some(workflow), ..self }
    }

    pub fn connections(self, connections: ConnectionService) -> Self {
        Self { connections: Some(connections), ..self }
    }

    /// Agents are kept by `agents`' store. Without it, in memory, with no
    /// lenser holding a handle (embedding, tests).
    pub fn agents(self, agents: AgentService) -> Self {
        Self { agents: Some(agents), ..self }
    }

    /// Model profiles. Without it, in memory, over the connections' store.
    pub fn profiles(self, profiles: ProfileService) -> Self {
        Self { profiles: Some(profiles), ..self }
    }

    /// Datasets. Without it, in memory.
    pub fn datasets(self, datasets: DatasetService) -> Self {
        Self { datasets: Some(datasets), ..self }
    }

    /// Experiments. Without it, in memory over the datasets' store, and
    /// nothing asks their cells.
    pub fn experiments(self, experiments: ExperimentService) -> Self {
        Self { experiments: Some(experiments), ..self }
    }

    /// Runs are kept in `store`, and `signal` wakes the runner that claims
    /// from it. Without it, runs are kept in memory and nothing runs them
    /// unless a runner is given `services.runs.store()`.
    pub fn runs(self, store: Arc<dyn RunStore>, signal: Arc<dyn RunSignal>) -> Self {
        Self { runs: Some((store, signal)), ..self }
    }

    /// What a run gets when its starter says nothing (budget, timeouts, parallel steps).
    pub fn run_defaults(self, run_defaults: RunDefaults) -> Self {
        Self { run_defaults, ..self }
    }

    /// `run_workflow` refuses a workflow with a step of a type `runnable`
    /// says the runner cannot run (instead of failing the run there).
    pub fn runnable(self, runnable: Runnable) -> Self {
        Self { runnable: Some(runnable), ..self }
    }

    /// Every model call (the AI judge's included) goes through `model`;
    /// without it, each service keeps its own provider.
    pub fn model(self, model: Arc<dyn ModelProvider>) -> Self {
        Self { model: Some(model), ..self }
    }

    /// Background work (judging battles) runs on `spawner`; without it, a
    /// call that starts background work waits for it (embedding, tests).
    pub fn spawner(self, spawner: Arc<dyn Spawner>) -> Self {
        Self { spawner: Some(spawner), ..self }
    }

    /// The services, each given the catalog's JSON Schema validator (for
    /// `auto_score` `json_schema` checks), the model provider and the
    /// spawner.
    ///
    /// # Panics
    /// When a service was not given: a wiring mistake, found at start-up.
    pub fn build(self) -> Services {
        let mut battle = self
            .battle
            .expect("Services::builder() needs .battle(...)")
            .with_json_schema_validator(Arc::new(crate::catalog::json_schema::JsonSchemaCheck));
        if let Some(model) = self.model {
            battle = battle.with_provider(model);
        }
        if let Some(spawner) = self.spawner {
            battle = battle.with_spawner(spawner);
        }
        let workflow = Arc::new(self.workflow.expect("Services::builder() needs .workflow(...)"));
        let (store, signal) =
            self.runs.unwrap_or_else(|| (Arc::new(MemoryRunStore::new()) as _, Arc::new(NoSignal) as _));
        let mut runs = RunService::new(workflow.clone(), store, signal).with_defaults(self.run_defaults);
        if let Some(r) = self.runnable {
            runs = runs.with_runnable(r);
        }
        let agents =
            Arc::new(self.agents.unwrap_or_else(|| {
                AgentService::new(Arc::new(MemoryAgentStore::new()), Arc::new(NoLensers))
            }));
        runs = runs.with_agent_credits(Arc::new(AgentCreditsOf(agents.clone())));
        let connections = self.connections.expect("Services::builder() needs .connections(...)");
        let profiles = self.profiles.unwrap_or_else(|| {
            ProfileService::new(Arc::new(MemoryProfiles::new()), connections.store().clone())
        });
        let datasets = self.datasets.unwrap_or_else(|| DatasetService::new(Arc::new(MemoryDatasets::new())));
        let experiments = self
            .experiments
            .unwrap_or_else(|| {
                ExperimentService::new(Arc::new(MemoryExperiments::new()), datasets.store().clone())
            })
            .with_validator(Arc::new(crate::catalog::json_schema::JsonSchemaCheck));
        Services {
            lens: self.lens.expect("Services::builder() needs .lens(...)"),
            battle: Arc::new(battle),
            workflow,
            runs: Arc::new(runs),
            connections,
            agents,
            profiles,
            datasets,
            experiments,
        }
    }
}

/// The agents' credits as the run service asks about them: the agent
/// service's count, passed on.
struct AgentCreditsOf(Arc<AgentService>);

#[async_trait::async_trait]
impl AgentCredits for AgentCreditsOf {
    async fn left(&self, agent: lf_core::LenserId) -> lf_core::LfResult<CreditsLeft> {
        let c = self.0.credits_left(agent).await?;
        Ok(CreditsLeft { left: c.left, limit: c.limit, resets_at: c.day.resets_at() })
    }

    async fn charge(&self, agent: lf_core::LenserId, run: RunId, credits: u64) -> lf_core::LfResult<()> {
        self.0.charge_run(agent, lf_core::RunId::from_uuid(run.as_uuid()), credits).await.map(|_| ())
    }
}

/// What a handler gets: the caller and the services.
#[derive(Clone)]
pub struct Ctx {
    pub principal: Principal,
    pub services: Arc<Services>,
}
