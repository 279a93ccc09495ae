//! What the executor tests share: one step's first attempt, in a new
//! workflow of its own after a manual trigger.

#[allow(dead_code)] // Only the agent tests ask a model.
pub mod scripted;

use std::sync::Arc;

use lf_core::{LenserId, Principal, Scopes, WorkflowId};
use lf_runner::Job;
use lf_workflow::engine::{Plan, Slot};
use lf_workflow::run::RunId;
use lf_workflow::{NewWorkflow, RawBlueprint, WorkflowService};
use serde_json::{Value, json};

/// The first attempt of `step` (a blueprint step whose key is `step`) in
/// a new workflow of `owner`, which also starts the run, on `input`;
/// keyed `run:step:1` when it has an outside effect.
#[allow(dead_code)] // Not every test file runs a single attempt.
pub async fn first_attempt(workflows: &WorkflowService, owner: LenserId, step: Value, input: Value) -> Job {
    let me = Principal::Lenser { id: owner, scopes: Scopes::READ_WRITE };
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "t",
        "steps": [{"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"}, step],
        "connections": [{"from_step": "start", "to_step": "step", "input_parameter": "input"}],
    }))
    .unwrap();
    let created = workflows.create(&me, NewWorkflow { blueprint, owner: None }).await.expect("created");
    let plan = Arc::new(Plan::new(&created.version).expect("a plan"));
    let index = plan.nodes.iter().position(|n| n.key == "step").unwrap() as u32;
    let run = RunId::new();
    let keyed = plan.node(index).outside_effect;
    Job {
        run,
        workflow_id: created.workflow.id,
        workflow_owner: owner,
        started_by: owner,
        agent: None,
        global_model_id: None,
        plan,
        slot: Slot::top(index),
        attempt: 1,
        input,
        idempotency_key: keyed.then(|| format!("{run}:step:1")),
        saved: None,
        credits_left: None,
        saves: None,
        secrets: Default::default(),
    }
}

/// Creates the workflow `blueprint` (its JSON) as `owner`: its id.
#[allow(dead_code)] // Not every test file makes workflows of its own.
pub async fn create_workflow(workflows: &WorkflowService, owner: LenserId, blueprint: Value) -> WorkflowId {
    let blueprint: RawBlueprint = serde_json::from_value(blueprint).unwrap();
    let me = Principal::Lenser { id: owner, scopes: Scopes::READ_WRITE };
    workflows.create(&me, NewWorkflow { blueprint, owner: None }).await.expect("created").workflow.id
}

/// The in-memory stores, the services over them and a started runner
/// with the pure steps and the steps that call the services
/// ([`lf_runner::OwnServices`], bound, and hearing the runner's events).
#[allow(dead_code)] // Each test file uses its part.
pub struct Stack {
    pub workflows: Arc<lf_workflow::MemoryWorkflowStore>,
    pub runs: Arc<lf_workflow::run::MemoryRunStore>,
    pub service: Arc<WorkflowService>,
    pub starts: Arc<lf_workflow::run::RunService>,
    pub battles: Arc<lf_battle::BattleService>,
    /// The store under `battles`, to write what a process left half done.
    pub battle_store: Arc<lf_battle::MemoryBattleStore>,
    /// Agents, whose team runs the runner runs (bound to `own`).
    pub agents: Arc<lf_agent::AgentService>,
    /// The lensers' accounts the agents (and battles) know.
    pub lensers: Arc<lf_agent::MemoryLensers>,
    pub own: lf_runner::OwnServices,
    pub executors: lf_runner::Executors,
    pub runner: lf_runner::Runner,
}

#[allow(dead_code)]
impl Stack {
    pub fn new() -> Self {
        Self::build(true)
    }

    /// A stack whose runner hears of ends (`hear_ends`), or not: as if
    /// every process died between a run's end and its hearing.
    pub fn build(hear_ends: bool) -> Self {
        Self::build_with(hear_ends, true)
    }

    /// As [`Stack::build`], with an agent service that tells `own` of its
    /// team runs (`dispatch`), or not: as if every process died between a
    /// team run's write and its dispatch.
    pub fn build_with(hear_ends: bool, dispatch: bool) -> Self {
        use lf_workflow::WorkflowStore;
        let workflows = Arc::new(lf_workflow::MemoryWorkflowStore::new());
        let service = Arc::new(WorkflowService::new(
            workflows.clone(),
            Arc::new(lf_workflow::MemoryLenses::new()),
            Arc::new(lf_workflow::MemoryConnections::new()),
        ));
        let runs = Arc::new(lf_workflow::run::MemoryRunStore::new());
        let own = lf_runner::OwnServices::new();
        let executors = own.register(lf_runner::Executors::pure());
        let config = lf_runner::RunnerConfig {
            lease: std::time::Duration::from_secs(30),
            ..lf_runner::RunnerConfig::default()
        };
        let runner = lf_runner::Runner::new(
            runs.clone(),
            workflows.clone() as Arc<dyn WorkflowStore>,
            executors.clone(),
            config,
        );
        let starts =
            Arc::new(lf_workflow::run::RunService::new(service.clone(), runs.clone(), runner.signal()));
        let battle_store = Arc::new(lf_battle::MemoryBattleStore::new());
        let battles = Arc::new(
            lf_battle::BattleService::new(battle_store.clone())
                .with_workflow_answers(Arc::new(own.clone()))
                .with_contender_refs(Arc::new(own.clone())),
        );
        own.bind(
            starts.clone(),
            battles.clone(),
            workflows.clone() as Arc<dyn WorkflowStore>,
            runner.stopping(),
        );
        let lensers = Arc::new(lf_agent::MemoryLensers::new());
        let agents =
            lf_agent::AgentService::new(Arc::new(lf_agent::MemoryAgentStore::new()), lensers.clone());
        let agents = Arc::new(if dispatch { agents.with_dispatch(Arc::new(own.clone())) } else { agents });
        own.bind_agents(agents.clone());
        if hear_ends {
            runner.on_end(Arc::new(own.clone()));
        }
        runner.start();
        Stack {
            workflows,
            runs,
            service,
            starts,
            battles,
            battle_store,
            agents,
            lensers,
            own,
            executors,
            runner,
        }
    }
}
