//! The `agent_execute` step on the in-memory stores with a real runner and
//! the real OpenAI-compatible client against a scripted model on
//! 127.0.0.1: a granted tool's result reaches the model and an ungranted
//! one's refusal does; a cap ends the step, not the run; a destructive call
//! waits for approval across a restart of the whole stack (runner and
//! services on the same stores) and runs exactly once when approved, or
//! reaches the model as a refusal when rejected; a team run hears every
//! call in order; the offline provider answers at once under its name.
//!
//! The `contender_run` step on the same stack: an ai_agent contender is
//! answered by its agent for the run's starter (the double answers as
//! lf-server's `CatalogTools` does, minus the catalog: the starter must
//! act for the agent, the agent's model is asked, the answer submitted as
//! the agent), once per saved step; a stranger's run and a contender that
//! is no agent fail the step. The real call through `call_as_agent` and
//! the action log are tested on the server's wiring (lf-server's
//! tests/contender_run.rs).

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use lf_agent::{
    Agent, AgentHandle, AgentService, DelegationPolicy, DisplayName, EventFilter, MemoryAgentStore, NewAgent,
    NewTeamRun, NoLensers, Persona, TeamEventKind, TeamInputs, TeamRunId, TeamRunStatus,
};
use lf_battle::{
    BattleService, BattleStatus, BattleTitle, BattleType, ContenderType, NewBattle, NewContender,
    SubmissionText, TaskPrompt,
};
use lf_core::{
    BattleId, ChatRequest, ContenderId, ContenderRefId, LenserId, LfResult, ModelProvider, PageRequest,
    Principal, Scopes, ToolCall, ToolSpec, WorkflowId,
};
use lf_runner::agent_loop::{Check, Outcome, ToolBox};
use lf_runner::{
    AgentSteps, AgentTools, ContenderSteps, Executors, OwnServices, Pricing, Runner, RunnerConfig,
};
use lf_workflow::engine::{NodeStatus, RunStatus};
use lf_workflow::run::{MemoryRunStore, Run, RunId, RunService, RunStore, StartRun};
use lf_workflow::{MemoryConnections, MemoryLenses, MemoryWorkflowStore, WorkflowService, WorkflowStore};
use serde_json::{Value, json};
use support::scripted::{self, Model, tool_calls};

use TeamEventKind as K;

mod support;

// ----- The scripted model -----

fn client(base: &str) -> Arc<dyn ModelProvider> {
    Arc::new(scripted::client(base))
}

fn calls(calls: &[(&str, &str)]) -> Value {
    tool_calls(calls, Some("Working on it."), 600)
}

fn answer(text: &str) -> Value {
    scripted::answer(text, 50)
}

// ----- The tool double: what an AgentTools over the catalog gives -----

/// The agent's grants: get_lens (read) and delete_lens (destructive);
/// counts the calls it runs, across restarts.
#[derive(Default)]
struct Ran {
    calls: Mutex<Vec<(String, String)>>,
    asked_for: Mutex<Vec<(LenserId, LenserId)>>,
    /// The battle answers given: starter, agent, battle, contender.
    answered: Mutex<Vec<(LenserId, LenserId, BattleId, ContenderId)>>,
}

impl Ran {
    fn of(&self, tool: &str) -> usize {
        self.calls.lock().unwrap().iter().filter(|c| c.0 == tool).count()
    }
}

struct Granted(Arc<Ran>);

const GRANTED: [&str; 2] = ["get_lens", "delete_lens"];

#[async_trait]
impl ToolBox for Granted {
    fn tools(&self) -> Vec<ToolSpec> {
        GRANTED
            .iter()
            .map(|n| ToolSpec {
                name: (*n).into(),
                description: format!("The {n} tool."),
                parameters: r#"{"type":"object"}"#.into(),
            })
            .collect()
    }
    async fn check(&self, call: &ToolCall) -> Check {
        match call.name.as_str() {
            "get_lens" => Check::Allowed,
            "delete_lens" => Check::NeedsApproval,
            other => Check::Refused(format!(
                "{other} is not granted to this agent; grant it with assign_agent_tool"
            )),
        }
    }
    async fn call(&self, call: &ToolCall) -> Result<String, String> {
        self.0.calls.lock().unwrap().push((call.name.clone(), call.arguments.clone()));
        Ok(json!({"ok": call.name, "lens_id": "L"}).to_string())
    }
    fn record(&self, _: &ToolCall, _: &Outcome) {}
}

/// What a battle answer needs, bound once the stack's services exist.
struct Answering {
    agents: Arc<AgentService>,
    battles: Arc<BattleService>,
    model: Arc<dyn ModelProvider>,
}

struct Catalog(Arc<Ran>, Arc<OnceLock<Answering>>);

#[async_trait]
impl AgentTools for Catalog {
    async fn toolbox(&self, starter: LenserId, agent: LenserId) -> LfResult<Box<dyn ToolBox>> {
        self.0.asked_for.lock().unwrap().push((starter, agent));
        Ok(Box::new(Granted(self.0.clone())))
    }

    /// As `call_as_agent` answers (without the policy, the caps and the
    /// log): the starter must act for the agent, whose persona and model
    /// answer the task prompt, submitted as the agent.
    async fn answer_battle(
        &self,
        starter: LenserId,
        agent: LenserId,
        battle: BattleId,
        contender: ContenderId,
    ) -> LfResult<Value> {
        let with = self.1.get().expect("bound");
        let a = with.agents.get(&lenser(starter), agent).await?.agent;
        let as_agent = Principal::Agent { agent_id: agent, owner: a.owner };
        let task = with.battles.get(&as_agent, battle).await?.battle.task_prompt;
        let persona = a.profile.persona.as_ref().map_or("An AI Lenser.", |p| p.as_str());
        let mut request = ChatRequest::new(persona, task.as_str());
        request.stand_in = Some(format!("@{} answers: {}", a.handle, task.as_str()));
        let text = SubmissionText::parse(with.model.chat(request).await?.text)?;
        let submitted = with.battles.submit_and_judge(&as_agent, battle, contender, text).await?;
        self.0.answered.lock().unwrap().push((starter, agent, battle, contender));
        Ok(json!({"submitted": true, "id": submitted.outcome.submission.id.to_string()}))
    }
}

// ----- The stack: stores kept, everything else made anew -----

/// What survives a restart.
#[derive(Clone)]
struct Stores {
    workflows: Arc<MemoryWorkflowStore>,
    runs: Arc<MemoryRunStore>,
    agents: Arc<MemoryAgentStore>,
    battles: Arc<lf_battle::MemoryBattleStore>,
    ran: Arc<Ran>,
}

impl Stores {
    fn new() -> Self {
        Stores {
            workflows: Arc::new(MemoryWorkflowStore::new()),
            runs: Arc::new(MemoryRunStore::new()),
            agents: Arc::new(MemoryAgentStore::new()),
            battles: Arc::new(lf_battle::MemoryBattleStore::new()),
            ran: Arc::default(),
        }
    }
}

/// A process: the services and a runner over `stores`.
struct Stack {
    service: Arc<WorkflowService>,
    starts: Arc<RunService>,
    agents: Arc<AgentService>,
    battles: Arc<BattleService>,
    executors: Executors,
    runner: Runner,
}

impl Stack {
    fn started(stores: &Stores, model: Arc<dyn ModelProvider>) -> Self {
        let s = Self::build(stores, model);
        s.runner.start();
        s
    }

    fn build(stores: &Stores, model: Arc<dyn ModelProvider>) -> Self {
        let service = Arc::new(WorkflowService::new(
            stores.workflows.clone(),
            Arc::new(MemoryLenses::new()),
            Arc::new(MemoryConnections::new()),
        ));
        let own = OwnServices::new();
        let answering = Arc::new(OnceLock::new());
        let tools: Arc<dyn AgentTools> = Arc::new(Catalog(stores.ran.clone(), answering.clone()));
        let executors = AgentSteps::new(model.clone(), tools.clone(), own.clone(), Pricing::default())
            .register(Executors::pure());
        let executors = ContenderSteps::new(tools, own.clone()).register(executors);
        let executors = own.register(executors);
        let config = RunnerConfig { lease: Duration::from_secs(30), ..RunnerConfig::default() };
        let runner = Runner::new(
            stores.runs.clone(),
            stores.workflows.clone() as Arc<dyn WorkflowStore>,
            executors.clone(),
            config,
        );
        let starts = Arc::new(RunService::new(service.clone(), stores.runs.clone(), runner.signal()));
        let battles = Arc::new(lf_battle::BattleService::new(stores.battles.clone()));
        own.bind(
            starts.clone(),
            battles.clone(),
            stores.workflows.clone() as Arc<dyn WorkflowStore>,
            runner.stopping(),
        );
        let agents = Arc::new(
            AgentService::new(stores.agents.clone(), Arc::new(NoLensers))
                .with_dispatch(Arc::new(own.clone())),
        );
        own.bind_agents(agents.clone());
        let _ = answering.set(Answering { agents: agents.clone(), battles: battles.clone(), model });
        runner.on_end(Arc::new(own));
        Stack { service, starts, agents, battles, executors, runner }
    }
}

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

async fn agent(s: &Stack, owner: LenserId, handle: &str) -> Agent {
    let mut new =
        NewAgent::new(AgentHandle::parse(handle).unwrap(), DisplayName::parse("Ada the tidy").unwrap());
    new.profile.persona = Some(Persona::parse("You are Ada. You keep lenses tidy.").unwrap());
    s.agents.create(&lenser(owner), new).await.unwrap()
}

/// A workflow of `owner`'s: its trigger, then one agent_execute step.
async fn workflow(s: &Stack, owner: LenserId, config: Value) -> WorkflowId {
    let step = json!({"key": "agent", "kind": "tool", "name": "Agent", "node_type": "agent_execute", "config": config});
    workflow_of(s, owner, step).await
}

/// A private workflow of `owner`'s: its trigger, then `step`.
async fn workflow_of(s: &Stack, owner: LenserId, step: Value) -> WorkflowId {
    support::create_workflow(&s.service, owner, json!({
        "title": "Agent work", "visibility": "private",
        "steps": [{"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"}, step],
        "connections": [{"from_step": "start", "to_step": step["key"], "input_parameter": "input"}],
    })).await
}

fn config(agent: &Agent, more: Value) -> Value {
    let mut c = json!({"ai_lenser_id": agent.id.to_string(), "prompt": "Tidy my lenses about [[topic]]."});
    c.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
    c
}

async fn start(s: &Stack, owner: LenserId, w: WorkflowId, budget_credits: Option<u64>) -> RunId {
    let mut inputs = serde_json::Map::new();
    inputs.insert("topic".into(), json!("regex"));
    let start = StartRun { workflow_id: Some(w), inputs, budget_credits, ..StartRun::default() };
    s.starts.start(&lenser(owner), start).await.unwrap().run.id
}

async fn run_until(stores: &Stores, id: RunId, done: impl Fn(&Run) -> bool) -> Run {
    for _ in 0..500 {
        let r = stores.runs.load_run(id).await.unwrap();
        if done(&r) {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{:#?}", stores.runs.load_run(id).await.unwrap());
}

async fn ended(stores: &Stores, id: RunId) -> Run {
    run_until(stores, id, |r| r.status().is_final()).await
}

/// The agent step's output in an ended run.
fn output(run: &Run) -> Value {
    let n = run.state.slots.values().find(|n| n.output.as_ref().is_some_and(|o| o.get("turns").is_some()));
    n.and_then(|n| n.output.clone()).unwrap_or_else(|| panic!("no agent output: {:#?}", run.state))
}

fn new_team_run(agent: LenserId, workflow_id: WorkflowId) -> NewTeamRun {
    let mut inputs = serde_json::Map::new();
    inputs.insert("topic".into(), json!("regex"));
    NewTeamRun {
        agent,
        workflow_id,
        inputs: TeamInputs::new(inputs).unwrap(),
        policy: DelegationPolicy::Auto,
        parent: None,
    }
}

async fn team_run_until(
    s: &Stack,
    owner: LenserId,
    a: &Agent,
    id: TeamRunId,
    status: TeamRunStatus,
) -> lf_agent::TeamRun {
    for _ in 0..500 {
        let t = s.agents.get_team_run(&lenser(owner), a.id, id).await.unwrap();
        if t.status == status {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("not {status}: {:#?}", s.agents.get_team_run(&lenser(owner), a.id, id).await.unwrap());
}

/// The team run's events, oldest first: kind, tool, note.
async fn events(
    s: &Stack,
    owner: LenserId,
    a: &Agent,
    id: TeamRunId,
) -> Vec<(K, Option<String>, Option<String>)> {
    let filter = EventFilter { team_run: Some(id), kind: None };
    let page = PageRequest::new(Some(100), None).unwrap();
    let listed = s.agents.list_events(&lenser(owner), a.id, &filter, page).await.unwrap();
    listed.items.iter().rev().map(|e| (e.kind, e.detail.tool.clone(), e.detail.note.clone())).collect()
}

// ----- The tests -----

#[tokio::test]
async fn a_granted_call_runs_an_ungranted_one_is_refused_and_the_answer_is_the_output() {
    let (m, base) =
        Model::start(vec![calls(&[("c1", "get_lens"), ("c2", "set_lens_visibility")]), answer("Tidied.")])
            .await;
    let stores = Stores::new();
    let s = Stack::started(&stores, client(&base));
    let owner = LenserId::new();
    let a = agent(&s, owner, "ada_tidy").await;
    let w = workflow(&s, owner, config(&a, json!({}))).await;
    let run = ended(&stores, start(&s, owner, w, None).await).await;

    assert_eq!(run.status(), RunStatus::Completed, "{:#?}", run.state);
    let out = output(&run);
    assert_eq!(
        (out["text"].as_str(), out["model"].as_str(), &out["turns"], &out["tool_calls"], &out["tokens"]),
        (Some("Tidied."), Some("agent-model"), &json!(2), &json!(2), &json!(650))
    );
    assert_eq!(run.state.result.as_ref().unwrap()["text"], "Tidied.", "downstream steps read text");
    assert_eq!(stores.ran.of("get_lens"), 1);
    assert_eq!(*stores.ran.asked_for.lock().unwrap(), [(owner, a.id)], "the starter acts for the agent");
    // What the model was sent: the persona, the filled prompt, the granted tools, then the results.
    let first = m.seen.lock().unwrap()[0].clone();
    assert_eq!(first["messages"][0]["content"], "You are Ada. You keep lenses tidy.");
    assert_eq!(first["messages"][1]["content"], "Tidy my lenses about regex.");
    let offered: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(offered, GRANTED);
    let r = m.results(1);
    assert_eq!(r[0], ("c1".to_owned(), json!({"ok": "get_lens", "lens_id": "L"})));
    assert_eq!((r[1].0.as_str(), r[1].1["error"].as_str()), ("c2", Some("refused")));
    assert!(r[1].1["message"].as_str().unwrap().contains("assign_agent_tool"), "{r:?}");
    // Charged as model steps are: a credit per started 1,000 tokens.
    assert_eq!(
        (run.state.usage().tokens, run.state.usage().credits, run.state.usage().model_calls),
        (650, 1, 2)
    );

    // Outside a team run nobody approves: a destructive call is refused, saying so.
    m.then([calls(&[("d1", "delete_lens")]), answer("Could not delete.")]);
    let run = ended(&stores, start(&s, owner, w, None).await).await;
    assert_eq!(output(&run)["text"], "Could not delete.");
    assert_eq!(stores.ran.of("delete_lens"), 0);
    let refused = m.results(3);
    assert!(refused[0].1["message"].as_str().unwrap().contains("team run"), "{refused:?}");
    s.runner.shutdown().await;
}

#[tokio::test]
async fn a_cap_ends_the_step_with_its_last_answer_and_the_run_completes() {
    let looping: Vec<Value> =
        (0..6).map(|i| calls(&[(["a", "b", "c", "d", "e", "f"][i], "get_lens")])).collect();
    let (m, base) = Model::start(looping).await;
    let stores = Stores::new();
    let s = Stack::started(&stores, client(&base));
    let owner = LenserId::new();
    let a = agent(&s, owner, "ada_loops").await;
    let w = workflow(&s, owner, config(&a, json!({"max_turns": 2}))).await;
    let run = ended(&stores, start(&s, owner, w, None).await).await;
    assert_eq!(run.status(), RunStatus::Completed);
    let out = output(&run);
    assert_eq!(
        (out["stopped"].as_str(), out["last_answer"].as_str(), &out["turns"], out.get("text")),
        (Some("max_turns"), Some("Working on it."), &json!(2), None)
    );
    assert_eq!((m.asked(), stores.ran.of("get_lens")), (2, 2));

    // The run's credit budget caps the tokens: 1 credit buys 1,000 tokens, 600 a turn.
    let w = workflow(&s, owner, config(&a, json!({}))).await;
    let run = ended(&stores, start(&s, owner, w, Some(1)).await).await;
    assert_eq!(run.status(), RunStatus::Completed);
    let out = output(&run);
    assert_eq!((out["stopped"].as_str(), &out["turns"]), (Some("budget"), &json!(2)));
    s.runner.shutdown().await;
}

#[tokio::test]
async fn an_approval_wait_survives_a_restart_and_runs_the_held_call_once() {
    let (m, base) = Model::start(vec![
        calls(&[("g1", "get_lens")]),
        calls(&[("d1", "delete_lens")]),
        answer("Deleted the stale lens."),
    ])
    .await;
    let stores = Stores::new();
    let first = Stack::started(&stores, client(&base));
    let owner = LenserId::new();
    let a = agent(&first, owner, "ada_careful").await;
    let w = workflow(&first, owner, config(&a, json!({}))).await;
    let svc = Principal::Service { acting_as: Some(owner) };
    let team = first.agents.start_team_run(&svc, new_team_run(a.id, w)).await.unwrap().run.id;

    // The destructive call is held: the team run awaits approval, the run waits.
    let held = team_run_until(&first, owner, &a, team, TeamRunStatus::AwaitingApproval).await;
    let run_id = RunId::from_uuid(held.workflow_run.unwrap().as_uuid());
    let waiting = run_until(&stores, run_id, |r| r.state.waiting().next().is_some()).await;
    assert_eq!(waiting.status(), RunStatus::Running, "the run has not ended");
    let (slot, what) = waiting.state.waiting().next().map(|(s, w)| (s, w.to_owned())).unwrap();
    assert_eq!(what, "approval of delete_lens");
    assert_eq!(waiting.state.slots[&slot].status, NodeStatus::Running);
    assert_eq!((stores.ran.of("delete_lens"), m.asked()), (0, 2), "nothing deleted yet");
    let asked = events(&first, owner, &a, team).await;
    let request = asked.iter().find(|e| e.0 == K::ApprovalRequested).expect("asked for approval");
    assert_eq!(request.1.as_deref(), Some("delete_lens"));
    assert!(request.2.as_deref().unwrap().contains("lens_id"), "the call is shown: {request:?}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(first.runner.active(), 0, "a waiting run holds no runner");

    // A restart: the whole stack goes, the stores stay.
    first.runner.shutdown().await;
    drop(first);
    let second = Stack::build(&stores, client(&base));
    // Approved before the new runner starts: the decision is kept, nothing runs yet.
    let approved = second.agents.decide_approval(&lenser(owner), a.id, team, true, None).await.unwrap();
    assert_eq!(approved.run.status, TeamRunStatus::Running);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(stores.ran.of("delete_lens"), 0);
    second.runner.start();

    let run = ended(&stores, run_id).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:#?}", run.state);
    assert_eq!(output(&run)["text"], "Deleted the stale lens.");
    assert_eq!(stores.ran.of("delete_lens"), 1, "the held call ran once");
    assert_eq!(stores.ran.of("get_lens"), 1, "the call before it did not run again");
    assert_eq!(m.asked(), 3, "the model was asked once more, not again for the held call");
    assert_eq!(
        m.results(2).last().unwrap(),
        &("d1".to_owned(), json!({"ok": "delete_lens", "lens_id": "L"}))
    );
    let out = output(&run);
    assert_eq!((&out["turns"], &out["tool_calls"], &out["tokens"]), (&json!(3), &json!(2), &json!(1250)));
    assert_eq!(run.state.usage().tokens, 1250, "every turn charged once");

    let done = team_run_until(&second, owner, &a, team, TeamRunStatus::Completed).await;
    assert_eq!(done.decision.map(|d| d.approved), Some(true));
    let seen = events(&second, owner, &a, team).await;
    let kinds: Vec<K> = seen.iter().map(|e| e.0).collect();
    assert_eq!(
        kinds,
        [
            K::DispatchQueued,
            K::DispatchStarted,
            K::ToolCalled,
            K::ToolCalled,
            K::ApprovalRequested,
            K::ApprovalGranted,
            K::ToolCalled,
            K::NodeStarted,
            K::NodeCompleted,
            K::Completed
        ]
    );
    let tools: Vec<(Option<&str>, Option<&str>)> =
        seen.iter().filter(|e| e.0 == K::ToolCalled).map(|e| (e.1.as_deref(), e.2.as_deref())).collect();
    assert_eq!(
        tools,
        [
            (Some("get_lens"), Some("ran")),
            (Some("delete_lens"), Some("held for approval")),
            (Some("delete_lens"), Some("ran"))
        ]
    );
    second.runner.shutdown().await;
}

#[tokio::test]
async fn a_rejected_call_reaches_the_model_as_a_refusal() {
    let (m, base) =
        Model::start(vec![calls(&[("d1", "delete_lens"), ("g1", "get_lens")]), answer("Kept it then.")])
            .await;
    let stores = Stores::new();
    let s = Stack::started(&stores, client(&base));
    let owner = LenserId::new();
    let a = agent(&s, owner, "ada_refused").await;
    let w = workflow(&s, owner, config(&a, json!({}))).await;
    let svc = Principal::Service { acting_as: Some(owner) };
    let team = s.agents.start_team_run(&svc, new_team_run(a.id, w)).await.unwrap().run.id;
    team_run_until(&s, owner, &a, team, TeamRunStatus::AwaitingApproval).await;
    let why = Some(lf_agent::Reason::parse("That lens is still in use").unwrap());
    s.agents.decide_approval(&lenser(owner), a.id, team, false, why).await.unwrap();

    let done = team_run_until(&s, owner, &a, team, TeamRunStatus::Completed).await;
    let run = ended(&stores, RunId::from_uuid(done.workflow_run.unwrap().as_uuid())).await;
    assert_eq!(output(&run)["text"], "Kept it then.");
    assert_eq!((stores.ran.of("delete_lens"), stores.ran.of("get_lens")), (0, 1), "the call after it runs");
    let r = m.results(1);
    assert_eq!(r.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["d1", "g1"]);
    assert_eq!(r[0].1["error"], "refused");
    assert!(r[0].1["message"].as_str().unwrap().contains("That lens is still in use"), "{r:?}");
    let outcomes: Vec<String> = events(&s, owner, &a, team)
        .await
        .into_iter()
        .filter(|e| e.0 == K::ToolCalled)
        .map(|e| e.2.unwrap())
        .collect();
    assert_eq!(outcomes, ["held for approval", "rejected: That lens is still in use", "ran"]);
    s.runner.shutdown().await;
}

#[tokio::test]
async fn a_team_run_hears_every_call_in_order() {
    let (_m, base) = Model::start(vec![
        calls(&[("a", "get_lens"), ("b", "set_lens_visibility")]),
        calls(&[("c", "get_lens")]),
        answer("Looked at them."),
    ])
    .await;
    let stores = Stores::new();
    let s = Stack::started(&stores, client(&base));
    let owner = LenserId::new();
    let a = agent(&s, owner, "ada_teams").await;
    let w = workflow(&s, owner, config(&a, json!({}))).await;
    let svc = Principal::Service { acting_as: Some(owner) };
    let team = s.agents.start_team_run(&svc, new_team_run(a.id, w)).await.unwrap().run.id;
    team_run_until(&s, owner, &a, team, TeamRunStatus::Completed).await;
    let seen = events(&s, owner, &a, team).await;
    let calls: Vec<(&str, &str)> = seen
        .iter()
        .filter(|e| e.0 == K::ToolCalled)
        .map(|e| (e.1.as_deref().unwrap(), e.2.as_deref().unwrap().split(':').next().unwrap()))
        .collect();
    assert_eq!(calls, [("get_lens", "ran"), ("set_lens_visibility", "refused"), ("get_lens", "ran")]);
    let last: Vec<K> = seen.iter().rev().take(3).map(|e| e.0).collect();
    assert_eq!(
        last,
        [K::Completed, K::NodeCompleted, K::NodeStarted],
        "the step's own events come at the end"
    );
    s.runner.shutdown().await;
}

#[tokio::test]
async fn the_offline_provider_answers_at_once_under_its_own_name() {
    let stores = Stores::new();
    let s = Stack::started(&stores, Arc::new(lf_model::OfflineProvider));
    let owner = LenserId::new();
    let a = agent(&s, owner, "ada_offline").await;
    let w = workflow(&s, owner, config(&a, json!({}))).await;
    let run = ended(&stores, start(&s, owner, w, None).await).await;
    assert_eq!(run.status(), RunStatus::Completed);
    let out = output(&run);
    assert_eq!(
        (out["model"].as_str(), &out["turns"], &out["tool_calls"]),
        (Some(lf_model::OFFLINE_MODEL_NAME), &json!(1), &json!(0))
    );
    assert_eq!(out["text"], "Offline answer from @ada_offline to: Tidy my lenses about regex.");
    assert_eq!(stores.ran.calls.lock().unwrap().len(), 0);
    s.runner.shutdown().await;
}

// ----- contender_run -----

const TASK: &str = "Explain Rust ownership in one sentence.";

/// An open battle of `creator` of `battle_type` with `contenders`: name,
/// type, reference, owner.
async fn open_battle(
    s: &Stack,
    creator: LenserId,
    battle_type: BattleType,
    contenders: &[(&str, ContenderType, ContenderRefId, Option<LenserId>)],
) -> (BattleId, Vec<ContenderId>) {
    let me = lenser(creator);
    let mut new = NewBattle::new(BattleTitle::parse("Ownership").unwrap(), TaskPrompt::parse(TASK).unwrap());
    new.battle_type = Some(battle_type);
    new.max_contenders = Some(lf_battle::MaxContenders::parse(contenders.len().max(2) as i64).unwrap());
    let b = s.battles.create(&me, new).await.unwrap();
    let mut ids = Vec::new();
    for (name, contender_type, reference, owner) in contenders {
        let c = NewContender {
            battle_id: b.id,
            display_name: lf_battle::DisplayName::parse(*name).unwrap(),
            contender_type: *contender_type,
            reference: *reference,
            slot: None,
            owner: *owner,
        };
        ids.push(s.battles.add_contender(&me, c).await.expect("joined").id);
    }
    s.battles.set_status(&me, b.id, BattleStatus::Open, false).await.unwrap();
    (b.id, ids)
}

fn ref_of(id: LenserId) -> ContenderRefId {
    ContenderRefId::from_uuid(id.as_uuid())
}

/// The contender_run step, its ids from the run's inputs.
fn answer_step() -> Value {
    json!({"key": "step", "kind": "tool", "name": "Answer", "node_type": "contender_run",
        "config": {"battle_id": "[[battle_id]]", "contender_id": "[[contender_id]]"}})
}

/// A workflow of `owner`'s: its trigger, then a contender_run step.
async fn answering_workflow(s: &Stack, owner: LenserId) -> WorkflowId {
    workflow_of(s, owner, answer_step()).await
}

fn ids(battle: BattleId, contender: ContenderId) -> Value {
    json!({"battle_id": battle.to_string(), "contender_id": contender.to_string()})
}

/// A run of `w` by `starter` answering `contender` of `battle`, ended.
async fn answered(
    stores: &Stores,
    s: &Stack,
    starter: LenserId,
    w: WorkflowId,
    battle: BattleId,
    contender: ContenderId,
) -> Run {
    let inputs = ids(battle, contender).as_object().unwrap().clone();
    let start = StartRun { workflow_id: Some(w), inputs, ..StartRun::default() };
    let id = s.starts.start(&lenser(starter), start).await.unwrap().run.id;
    ended(stores, id).await
}

/// The failed step's error: code, message.
fn step_error(run: &Run) -> (String, String) {
    assert_eq!(run.status(), RunStatus::Failed, "{:#?}", run.state);
    let e = run.state.slots.values().find_map(|n| n.error.clone()).expect("a step failed");
    (e.code, e.message)
}

#[tokio::test]
async fn contender_run_answers_as_the_agent_once_per_saved_step() {
    let (m, base) =
        Model::start(vec![answer("Every value has one owner."), answer("Each value has exactly one owner.")])
            .await;
    let stores = Stores::new();
    let s = Stack::started(&stores, client(&base));
    let owner = LenserId::new();
    let a = agent(&s, owner, "ada_fights").await;
    let rival = ref_of(LenserId::new());
    let (b, cs) = open_battle(
        &s,
        owner,
        BattleType::AiVsAi,
        &[
            ("Ada", ContenderType::AiAgent, ref_of(a.id), Some(owner)),
            ("Rival", ContenderType::AiModel, rival, None),
        ],
    )
    .await;
    let w = answering_workflow(&s, owner).await;
    let run = answered(&stores, &s, owner, w, b, cs[0]).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:#?}", run.state);

    let sheet = s.battles.get(&lenser(owner), b).await.unwrap();
    let submission = sheet.submission_of(cs[0]).expect("submitted");
    assert_eq!(submission.submitted_by, Some(a.id), "submitted as the agent");
    assert_eq!(submission.text.as_str(), "Every value has one owner.", "the model's answer");
    let out = run.state.result.clone().expect("the step's output is the run's result");
    let mut want = ids(b, cs[0]);
    want["submission_id"] = json!(submission.id.to_string());
    want["text"] = json!("Every value has one owner.");
    assert_eq!(out, want);
    assert_eq!(*stores.ran.answered.lock().unwrap(), [(owner, a.id, b, cs[0])], "for the run's starter");
    let asked = m.seen.lock().unwrap()[0].clone();
    assert_eq!(asked["messages"][0]["content"], "You are Ada. You keep lenses tidy.", "its persona");
    assert_eq!(asked["messages"][1]["content"], TASK, "the task prompt");

    // The step run again with its save outputs the answer without asking again.
    let exec = s.executors.get("contender_run").unwrap();
    let mut job =
        support::first_attempt(&s.service, owner, answer_step(), json!({"input": ids(b, cs[0])})).await;
    job.saved = Some(json!({"answered": want.clone()}));
    assert_eq!(exec.execute(&job).await.unwrap().output, want);
    assert_eq!((m.asked(), stores.ran.answered.lock().unwrap().len()), (1, 1), "not answered again");

    // Without the save (a crash before it), it answers once more: the
    // answer replaces the first, under the same submission.
    job.saved = None;
    let again = exec.execute(&job).await.unwrap().output;
    assert_eq!(
        (again["text"].as_str(), &again["submission_id"]),
        (Some("Each value has exactly one owner."), &want["submission_id"])
    );
    let sheet = s.battles.get(&lenser(owner), b).await.unwrap();
    assert_eq!(sheet.submissions.len(), 1, "never a second submission");
    assert_eq!(m.asked(), 2);
    s.runner.shutdown().await;
}

#[tokio::test]
async fn contender_run_fails_for_a_stranger_and_for_contenders_that_are_not_agents() {
    let stores = Stores::new();
    let s = Stack::started(&stores, Arc::new(lf_model::OfflineProvider));
    let (owner, stranger) = (LenserId::new(), LenserId::new());
    let a = agent(&s, owner, "ada_offline_fights").await;
    let (b, cs) = open_battle(
        &s,
        owner,
        BattleType::HumanVsAi,
        &[
            ("Ada", ContenderType::AiAgent, ref_of(a.id), Some(owner)),
            ("Me", ContenderType::Human, ref_of(owner), None),
            ("Rival", ContenderType::AiModel, ref_of(LenserId::new()), None),
        ],
    )
    .await;
    let mine = answering_workflow(&s, owner).await;

    // A stranger to the agent: the battle is open to all, the agent is not theirs.
    let theirs = answering_workflow(&s, stranger).await;
    let (code, message) = step_error(&answered(&stores, &s, stranger, theirs, b, cs[0]).await);
    assert_eq!(code, "not_found", "{message}");
    // A contender that is no agent: the step says how it is answered.
    let flow = ContenderRefId::from_uuid(mine.as_uuid());
    let (wb, wc) = open_battle(
        &s,
        owner,
        BattleType::WorkflowBattle,
        &[("Flow", ContenderType::Workflow, flow, Some(owner))],
    )
    .await;
    for (battle, c, how) in [
        (b, cs[1], "a human contender"),
        (b, cs[2], "an ai_model contender"),
        (wb, wc[0], "answers by its own run"),
    ] {
        let (code, message) = step_error(&answered(&stores, &s, owner, mine, battle, c).await);
        assert_eq!(code, "invalid_input");
        assert!(message.contains("answers only ai_agent contenders") && message.contains(how), "{message}");
    }
    // A battle the starter cannot see (a stranger's draft), a contender of no battle.
    let draft = NewBattle::new(BattleTitle::parse("Draft").unwrap(), TaskPrompt::parse(TASK).unwrap());
    let hidden = s.battles.create(&lenser(stranger), draft).await.unwrap().id;
    let (code, message) = step_error(&answered(&stores, &s, owner, mine, hidden, cs[0]).await);
    assert_eq!(code, "not_found");
    assert!(message.contains("cannot see it"), "{message}");
    let (code, _) = step_error(&answered(&stores, &s, owner, mine, b, ContenderId::new()).await);
    assert_eq!(code, "not_found");
    let sheet = s.battles.get(&lenser(owner), b).await.unwrap();
    assert!(sheet.submissions.is_empty(), "nothing was submitted");
    assert!(stores.ran.answered.lock().unwrap().is_empty());

    // The owner's run answers with the offline provider's stand-in.
    let run = answered(&stores, &s, owner, mine, b, cs[0]).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:#?}", run.state);
    assert_eq!(run.state.result.as_ref().unwrap()["text"], format!("@ada_offline_fights answers: {TASK}"));
    s.runner.shutdown().await;
}
