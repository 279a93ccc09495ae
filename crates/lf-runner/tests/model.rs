//! The model steps through the runner, against a provider that records
//! what it was asked and answers as scripted (or with the stand-in, as the
//! offline provider does).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lf_core::{ChatRequest, ChatResponse, LenserId, LfResult, ModelProvider, Principal, Scopes, WorkflowId};
use lf_lens::{LensService, MemoryLensStore, NewLens, TemplateBody, Title, Visibility};
use lf_runner::{Executors, ModelSteps, Pricing, Runner, RunnerConfig};
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{MemoryRunStore, Run, RunId, RunService, RunStore, StartRun};
use lf_workflow::{
    LensFacts, LensParam, MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, RawBlueprint,
    WorkflowService, WorkflowStore,
};
use serde_json::{Value, json};

/// Answers with `script` when set, else with the request's stand-in.
#[derive(Default)]
struct Scripted {
    asked: Mutex<Vec<ChatRequest>>,
    script: Mutex<Option<String>>,
}

impl ModelProvider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn chat<'life0, 'async_trait>(
        &'life0 self,
        request: ChatRequest,
    ) -> Pin<Box<dyn Future<Output = LfResult<ChatResponse>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        let text = self.script.lock().unwrap().clone().or(request.stand_in.clone()).unwrap_or_default();
        let model = request.model.clone().unwrap_or_else(|| "configured".into());
        self.asked.lock().unwrap().push(request);
        Box::pin(async move { Ok(ChatResponse::new(text, model)) })
    }
}

struct World {
    model: Arc<Scripted>,
    lenses: LensService,
    facts: Arc<MemoryLenses>,
    runs: Arc<MemoryRunStore>,
    workflows: Arc<MemoryWorkflowStore>,
    service: RunService,
    runner: Runner,
    me: Principal,
    owner: LenserId,
}

/// Resolves `fast` (a profile of the starter's) to its own endpoint with
/// its parameters, `hidden` (someone else's private profile) to NOT_FOUND,
/// and anything else to that model on `default`.
struct Profiles {
    default: Arc<Scripted>,
    fast: Arc<Scripted>,
}

impl lf_core::ModelResolver for Profiles {
    fn resolve<'a>(
        &'a self,
        _p: &'a Principal,
        field: &'static str,
        named: &'a str,
    ) -> Pin<Box<dyn Future<Output = LfResult<lf_core::ResolvedModel>> + Send + 'a>> {
        let on = |provider: Arc<Scripted>, endpoint: &str, model: &str| {
            lf_core::ResolvedModel::on(provider, endpoint, Some(model.into()))
        };
        let answer = match named {
            "fast" => Ok(lf_core::ResolvedModel {
                profile: Some(lf_core::ModelProfileId::new()),
                temperature: Some(0.25),
                top_p: Some(0.5),
                max_tokens: Some(77),
                seed: Some(7),
                stop: vec!["END".into()],
                ..on(self.fast.clone(), "ollama", "llama3.2")
            }),
            "hidden" => Err(lf_core::LfError::new(
                lf_core::ErrorCode::NotFound,
                "No model profile hidden that you can use.",
            )
            .with_field(field)),
            bare => Ok(on(self.default.clone(), "default", bare)),
        };
        Box::pin(async move { answer })
    }
}

impl World {
    fn new(pricing: Pricing) -> Self {
        Self::with(pricing, None)
    }

    /// A world whose model steps name models through `resolver`.
    fn with(pricing: Pricing, resolver: Option<Arc<dyn lf_core::ModelResolver>>) -> Self {
        let model = Arc::new(Scripted::default());
        let lenses = LensService::new(Arc::new(MemoryLensStore::new()));
        let facts = Arc::new(MemoryLenses::new());
        let runs = Arc::new(MemoryRunStore::new());
        let workflows = Arc::new(MemoryWorkflowStore::new());
        let wf = Arc::new(WorkflowService::new(
            workflows.clone(),
            facts.clone(),
            Arc::new(MemoryConnections::new()),
        ));
        let own = lf_runner::OwnServices::new();
        if let Some(r) = resolver {
            own.bind_resolver(r);
        }
        let executors = ModelSteps::new(model.clone(), lenses.clone(), pricing)
            .resolving(own)
            .register(Executors::pure());
        let runner = Runner::new(
            runs.clone(),
            workflows.clone() as Arc<dyn WorkflowStore>,
            executors,
            RunnerConfig { lease: Duration::from_secs(30), ..RunnerConfig::default() },
        );
        let service = RunService::new(wf.clone(), runs.clone(), runner.signal());
        let owner = LenserId::new();
        let me = Principal::Lenser { id: owner, scopes: Scopes::READ_WRITE };
        World { model, lenses, facts, runs, workflows, service, runner, me, owner }
    }

    /// A lens of the owner's, known to the workflow validator too.
    async fn lens(&self, body: &str) -> lf_core::LensId {
        let new = NewLens {
            title: Title::parse("Research").unwrap(),
            description: None,
            body: TemplateBody::parse(body).unwrap(),
            visibility: Visibility::Private,
            params: vec![],
        };
        let view = self.lenses.create(&self.me, new).await.unwrap();
        let params = view
            .version
            .params
            .iter()
            .map(|p| LensParam { label: p.label.clone(), optional: p.optional })
            .collect();
        self.facts.insert(
            self.owner,
            true,
            LensFacts {
                lens_id: view.lens.id,
                version_id: view.version.id,
                title: "Research".into(),
                params,
                missing_label: None,
            },
        );
        view.lens.id
    }

    async fn workflow(&self, steps: Value, connections: Value) -> WorkflowId {
        let wf = WorkflowService::new(
            self.workflows.clone(),
            self.facts.clone(),
            Arc::new(MemoryConnections::new()),
        );
        let blueprint: RawBlueprint =
            serde_json::from_value(json!({"title": "t", "steps": steps, "connections": connections}))
                .unwrap();
        wf.create(&self.me, NewWorkflow { blueprint, owner: None }).await.expect("created").workflow.id
    }

    async fn run(&self, s: StartRun) -> Run {
        let task = self.runner.start();
        let run = self.run_started(s).await;
        self.runner.shutdown().await;
        task.await.unwrap();
        run
    }

    /// Starts a run on the runner already started, and waits for its end.
    async fn run_started(&self, s: StartRun) -> Run {
        let id: RunId = self.service.start(&self.me, s).await.expect("started").run.id;
        let mut run = self.runs.load_run(id).await.unwrap();
        for _ in 0..500 {
            if run.status().is_final() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
            run = self.runs.load_run(id).await.unwrap();
        }
        assert!(run.status().is_final(), "the run ended");
        run
    }
}

fn trigger() -> Value {
    json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"})
}

fn step_output(run: &Run, node: u32) -> Value {
    run.state.slots[&lf_workflow::engine::Slot::top(node)].output.clone().unwrap_or_default()
}

fn start(workflow: WorkflowId, inputs: Value) -> StartRun {
    StartRun {
        workflow_id: Some(workflow),
        inputs: inputs.as_object().unwrap().clone(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lens_step_resolves_its_lens_with_wired_inputs_and_asks_the_model() {
    let w = World::new(Pricing { credits_per_1k_tokens: 1_000 });
    let lens = w.lens("Write three facts about [[Topic]] for [[Audience]].").await;
    let wf = w
        .workflow(
            json!([trigger(), {"key": "research", "kind": "lens", "name": "Research", "lens_id": lens.to_string(), "parameters": {"audience": "kids"}}]),
            json!([{"from_step": "start", "output_key": "topic", "to_step": "research", "input_parameter": "topic"}]),
        )
        .await;
    let mut s = start(wf, json!({"topic": "otters"}));
    s.global_model_id = Some("big-model".into());
    let run = w.run(s).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:?}", run.state.error);
    let asked = w.model.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].user, "Write three facts about otters for kids.",
        "wired and configured values, by label"
    );
    assert_eq!(
        asked[0].model.as_deref(),
        Some("big-model"),
        "global_model_id overrides the configured model"
    );
    let out = step_output(&run, 1);
    assert_eq!(out["model"], json!("big-model"));
    assert!(out["text"].as_str().unwrap().starts_with("Offline answer to: Write three facts"));
    let usage = run.state.usage();
    assert_eq!(usage.model_calls, 1);
    assert_eq!(usage.tokens, out["input_tokens"].as_u64().unwrap() + out["output_tokens"].as_u64().unwrap());
    assert_eq!(usage.credits, usage.tokens, "1,000 credits per 1,000 tokens");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_classifier_outputs_the_label_and_a_step_model_wins_over_the_runs() {
    let w = World::new(Pricing::default());
    *w.model.script.lock().unwrap() = Some(" Bug \n".into());
    let wf = w
        .workflow(
            json!([trigger(), {"key": "sort", "kind": "tool", "name": "Sort", "node_type": "classifier", "config": {"labels": ["billing", "bug"], "model": "small"}}]),
            json!([{"from_step": "start", "output_key": "text", "to_step": "sort", "input_parameter": "input"}]),
        )
        .await;
    let mut s = start(wf, json!({"text": "It crashes."}));
    s.global_model_id = Some("big-model".into());
    let run = w.run(s).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:?}", run.state.error);
    let out = step_output(&run, 1);
    assert_eq!((out["label"].clone(), out["labels"].clone()), (json!("bug"), json!(["bug"])));
    assert_eq!(w.model.asked.lock().unwrap()[0].model.as_deref(), Some("small"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_is_no_label_fails_the_step_after_its_retries() {
    let w = World::new(Pricing::default());
    *w.model.script.lock().unwrap() = Some("maybe".into());
    let wf = w
        .workflow(
            json!([trigger(), {"key": "sort", "kind": "tool", "name": "Sort", "node_type": "classifier", "config": {"labels": ["billing", "bug"]}}]),
            json!([{"from_step": "start", "output_key": "text", "to_step": "sort", "input_parameter": "input"}]),
        )
        .await;
    let run = w.run(start(wf, json!({"text": "?"}))).await;
    assert_eq!(run.status(), RunStatus::Failed);
    let node = &run.state.slots[&lf_workflow::engine::Slot::top(1)];
    assert_eq!(node.attempt, 3, "a provider error is retried");
    assert!(node.error.clone().unwrap().message.contains("none of the labels billing, bug"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_reads_the_score_out_of_prose_and_keeps_it_on_its_scale() {
    let w = World::new(Pricing::default());
    *w.model.script.lock().unwrap() =
        Some("Sure! {\"score\": 42, \"rationale\": \"great\"} Hope that helps.".into());
    let wf = w
        .workflow(
            json!([trigger(), {"key": "judge", "kind": "tool", "name": "Judge", "node_type": "judge_evaluator", "config": {"rubric": "Accurate.", "max_score": 10}}]),
            json!([{"from_step": "start", "output_key": "answer", "to_step": "judge", "input_parameter": "input"}]),
        )
        .await;
    let run = w.run(start(wf, json!({"answer": "Rust 1.0 shipped in 2015."}))).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:?}", run.state.error);
    let out = step_output(&run, 1);
    assert_eq!((out["score"].clone(), out["rationale"].clone()), (json!(10.0), json!("great")));
    assert_eq!(w.model.asked.lock().unwrap()[0].temperature, Some(0.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_step_past_the_budget_is_not_started() {
    let w = World::new(Pricing { credits_per_1k_tokens: 1_000 });
    let steps = json!([
        trigger(),
        {"key": "one", "kind": "tool", "name": "One", "node_type": "summarizer", "config": {"max_words": 10}},
        {"key": "two", "kind": "tool", "name": "Two", "node_type": "summarizer", "config": {"max_words": 10}},
    ]);
    let conns = json!([
        {"from_step": "start", "output_key": "text", "to_step": "one", "input_parameter": "input"},
        {"from_step": "one", "output_key": "text", "to_step": "two", "input_parameter": "input"},
    ]);
    let wf = w.workflow(steps, conns).await;
    let mut s = start(wf, json!({"text": "A long article about otters and rivers and the sea."}));
    s.budget_credits = Some(5);
    let run = w.run(s).await;
    assert_eq!(run.status(), RunStatus::Failed);
    let e = run.state.error.clone().unwrap();
    assert_eq!((e.code.as_str(), e.node.as_deref()), ("budget_exceeded", Some("two")));
    assert_eq!(w.model.asked.lock().unwrap().len(), 1, "the second model call was never made");
    assert!(run.state.usage().credits > 5, "the first call's cost is on record");
}

/// Sets `label` of `lens` at version `semver`, as its owner.
async fn set_label(w: &World, lens: lf_core::LensId, label: &str, semver: &str) {
    let set = lf_lens::SetLabel {
        lens_id: lens,
        label: lf_lens::LabelName::parse("label", label).unwrap(),
        version: lf_lens::VersionSelector::Semver(lf_lens::Semver::parse(semver).unwrap()),
        protect: None,
    };
    w.lenses.set_label(&w.me, set, false).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lens_step_runs_the_version_its_label_points_at_when_it_runs() {
    let w = World::new(Pricing::default());
    let lens = w.lens("Write three short facts about [[Topic]] for a curious reader.").await;
    let update = lf_lens::LensUpdate {
        body: Some(
            TemplateBody::parse("Write five surprising facts about [[Topic]] for a curious reader.").unwrap(),
        ),
        ..lf_lens::LensUpdate::new(lens)
    };
    w.lenses.update(&w.me, update).await.unwrap();
    set_label(&w, lens, "production", "1.0.0").await;
    let wired =
        json!([{"from_step": "start", "output_key": "topic", "to_step": "ask", "input_parameter": "topic"}]);
    let by_label = w
        .workflow(
            json!([trigger(), {"key": "ask", "kind": "lens", "name": "Ask", "lens_id": lens.to_string(), "config": {"label": "production"}}]),
            wired.clone(),
        )
        .await;
    let execute = w
        .workflow(
            json!([trigger(), {"key": "ask", "kind": "tool", "name": "Ask", "node_type": "lens_execute", "config": {"lens_id": lens.to_string(), "label": "production"}}]),
            wired.clone(),
        )
        .await;
    let head = w
        .workflow(
            json!([trigger(), {"key": "ask", "kind": "lens", "name": "Ask", "lens_id": lens.to_string()}]),
            wired,
        )
        .await;
    let version = |semver: &'static str| {
        let which = lf_lens::VersionSelector::Semver(lf_lens::Semver::parse(semver).unwrap());
        let (lenses, me) = (w.lenses.clone(), w.me.clone());
        async move { lenses.view(&me, lens, which).await.unwrap().version.id.to_string() }
    };
    let (v1, v2) = (version("1.0.0").await, version("1.0.1").await);

    let task = w.runner.start();
    let mut asked = Vec::new();
    for (wf, ran, label) in
        [(by_label, &v1, json!("production")), (execute, &v1, json!("production")), (head, &v2, Value::Null)]
    {
        let run = w.run_started(start(wf, json!({"topic": "otters"}))).await;
        assert_eq!(run.status(), RunStatus::Completed, "{:?}", run.state.error);
        let out = step_output(&run, 1);
        assert_eq!(out["version"]["version_id"], json!(ran), "{out}");
        assert_eq!(out["version"]["lens_id"], json!(lens.to_string()));
        assert_eq!(out["version"]["label"], label);
        asked.push(w.model.asked.lock().unwrap().last().unwrap().user.clone());
    }
    assert_eq!(asked[0], "Write three short facts about otters for a curious reader.", "production is 1.0.0");
    assert_eq!(asked[1], asked[0]);
    assert_eq!(
        asked[2], "Write five surprising facts about otters for a curious reader.",
        "the head is 1.0.1"
    );
    assert_eq!(
        step_output(&w.run_started(start(by_label, json!({"topic": "otters"}))).await, 1)["version"]["semver"],
        "1.0.0"
    );

    // The label moves: the same workflow version runs the new lens version.
    set_label(&w, lens, "production", "1.0.1").await;
    for wf in [by_label, execute] {
        let run = w.run_started(start(wf, json!({"topic": "otters"}))).await;
        let out = step_output(&run, 1);
        assert_eq!(
            (&out["version"]["version_id"], &out["version"]["semver"]),
            (&json!(v2), &json!("1.0.1")),
            "{out}"
        );
        assert_eq!(
            w.model.asked.lock().unwrap().last().unwrap().user,
            "Write five surprising facts about otters for a curious reader."
        );
        assert_eq!(run.version_id, w.runs.load_run(run.id).await.unwrap().version_id);
    }
    w.runner.shutdown().await;
    task.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_the_lens_does_not_have_fails_the_step_naming_its_labels() {
    let w = World::new(Pricing::default());
    let lens = w.lens("Write three short facts about [[Topic]] for a curious reader.").await;
    set_label(&w, lens, "staging", "1.0.0").await;
    let wf = w
        .workflow(
            json!([trigger(), {"key": "ask", "kind": "lens", "name": "Ask", "lens_id": lens.to_string(), "config": {"label": "production"}}]),
            json!([{"from_step": "start", "output_key": "topic", "to_step": "ask", "input_parameter": "topic"}]),
        )
        .await;
    let run = w.run(start(wf, json!({"topic": "otters"}))).await;
    assert_eq!(run.status(), RunStatus::Failed);
    let node = &run.state.slots[&lf_workflow::engine::Slot::top(1)];
    let error = node.error.clone().unwrap();
    assert_eq!(error.code, "not_found");
    assert!(error.message.contains("has no label production: its labels are staging"), "{}", error.message);
    assert_eq!(node.attempt, 1, "a missing label is not retried");
    assert!(w.model.asked.lock().unwrap().is_empty(), "no model was asked");
}

/// A world whose steps name models through [`Profiles`], and its `default`
/// and `fast` endpoints.
fn profiled() -> (World, Arc<Scripted>, Arc<Scripted>) {
    let fast = Arc::new(Scripted::default());
    let default = Arc::new(Scripted::default());
    let profiles = Profiles { default: default.clone(), fast: fast.clone() };
    (World::with(Pricing::default(), Some(Arc::new(profiles))), default, fast)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_naming_a_profile_asks_its_endpoint_with_its_parameters_unless_the_step_sets_them() {
    let (w, _, fast) = profiled();
    let wf = w
        .workflow(
            json!([trigger(), {"key": "sum", "kind": "tool", "name": "Sum", "node_type": "summarizer", "config": {"model": "fast", "max_tokens": 300}}]),
            json!([{"from_step": "start", "output_key": "text", "to_step": "sum", "input_parameter": "input"}]),
        )
        .await;
    let run = w.run(start(wf, json!({"text": "A long text."}))).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:?}", run.state.error);
    let asked = fast.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "the profile's endpoint was asked");
    let r = &asked[0];
    assert_eq!(r.model.as_deref(), Some("llama3.2"), "the profile's model");
    assert_eq!((r.temperature, r.top_p, r.seed), (Some(0.25), Some(0.5), Some(7)), "its parameters");
    assert_eq!(r.stop, ["END"]);
    assert_eq!(r.max_tokens, Some(300), "the step's own max_tokens wins");
    assert!(r.stand_in.is_some(), "the stand-in is kept for an offline endpoint");
    assert_eq!(step_output(&run, 1)["model"], json!("llama3.2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_model_name_stays_on_default_and_a_hidden_profile_is_not_found() {
    let (w, default, fast) = profiled();
    let steps = |model: &str| json!([trigger(), {"key": "sum", "kind": "tool", "name": "Sum", "node_type": "summarizer", "config": {"model": model}}]);
    let wire =
        json!([{"from_step": "start", "output_key": "text", "to_step": "sum", "input_parameter": "input"}]);
    let task = w.runner.start();
    let wf = w.workflow(steps("gpt-4o-mini"), wire.clone()).await;
    let run = w.run_started(start(wf, json!({"text": "t"}))).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:?}", run.state.error);
    assert_eq!(default.asked.lock().unwrap()[0].model.as_deref(), Some("gpt-4o-mini"));
    assert!(w.model.asked.lock().unwrap().is_empty(), "asked through the resolver");

    let wf = w.workflow(steps("hidden"), wire).await;
    let run = w.run_started(start(wf, json!({"text": "t"}))).await;
    w.runner.shutdown().await;
    task.await.unwrap();
    assert_eq!(run.status(), RunStatus::Failed);
    let error = run.state.slots[&lf_workflow::engine::Slot::top(1)].error.clone().unwrap();
    assert_eq!(error.code, "not_found");
    assert!(error.message.starts_with("model: "), "names the field: {}", error.message);
    assert!(fast.asked.lock().unwrap().is_empty());
}
