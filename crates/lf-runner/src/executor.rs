//! Executors: what runs one attempt of one node. The runner hands each a
//! [`Job`] and feeds what it answers back to the engine; an executor knows
//! nothing of leases, retries or the graph.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use lf_core::{LenserId, Timestamp, WorkflowId};
use lf_workflow::engine::{Failure, LogLine, Plan, PlanNode, Slot, Usage, Wait, main_input};
use lf_workflow::exec::run_pure;
use lf_workflow::run::RunId;
use lf_workflow::{Connection, Redaction, Secret};
use serde_json::Value;

use crate::steps::Runs;

/// One attempt of one node.
#[derive(Clone, Debug)]
pub struct Job {
    pub run: RunId,
    pub workflow_id: WorkflowId,
    pub workflow_owner: LenserId,
    pub started_by: LenserId,
    /// The AI Lenser that started the run for `started_by`, if one did: a
    /// step that writes as the workflow's owner records it when that owner
    /// is the starter (the agent acts for its owner only).
    pub agent: Option<LenserId>,
    pub global_model_id: Option<String>,
    pub plan: Arc<Plan>,
    pub slot: Slot,
    pub attempt: u32,
    /// Its parameters merged with what its connections carried.
    pub input: Value,
    /// For a node with outside effects: `run:step[#item]:attempt`, the
    /// same for every try of this attempt (also after a takeover), sent as
    /// an `Idempotency-Key` where the target is HTTP.
    pub idempotency_key: Option<String>,
    /// What this step last saved of itself ([`Job::checkpoint`], or a
    /// [`Done::hold`]), when it runs again: after a takeover, a wait, a
    /// retry. `None` the first time.
    pub saved: Option<Value>,
    /// The run's credits left under its budget when the attempt started
    /// (`None`: no budget).
    pub credits_left: Option<u64>,
    /// Where [`Job::checkpoint`] saves (the runner's; `None` outside one).
    pub saves: Option<Checkpoints>,
    /// What the saved connections this attempt opened must not leave:
    /// everything it gives back passes their redaction
    /// ([`Executors::execute`], [`Job::checkpoint`]).
    pub secrets: OpenedSecrets,
}

/// The saved connections an attempt opened, as one [`Redaction`]; shared
/// by the clones of its [`Job`].
#[derive(Clone, Debug, Default)]
pub struct OpenedSecrets(Arc<Mutex<Redaction>>);

impl OpenedSecrets {
    /// Adds what `connection` and its `secret` must not leave.
    pub fn add(&self, connection: &Connection, secret: &Secret) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).add_connection(connection, secret);
    }

    /// The redaction of every connection opened so far.
    pub fn redaction(&self) -> Redaction {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// A running attempt's way to save where it is, through the runner that
/// drives its run (see [`Job::checkpoint`]).
#[derive(Clone, Debug)]
pub struct Checkpoints(pub(crate) tokio::sync::mpsc::UnboundedSender<Checkpoint>);

/// One save asked for: written under the run's lease, then answered.
#[derive(Debug)]
pub(crate) struct Checkpoint {
    pub(crate) slot: Slot,
    pub(crate) attempt: u32,
    pub(crate) state: Value,
    pub(crate) usage: Usage,
    pub(crate) saved: tokio::sync::oneshot::Sender<bool>,
}

impl Job {
    pub fn node(&self) -> &PlanNode {
        self.plan.node(self.slot.node)
    }

    /// Saves `state` as where this attempt is, with what it used since its
    /// last save (counted in the run's usage at once), under the run's
    /// lease, before it answers: true once written. False when it could
    /// not be (the run was lost to another runner, or this attempt was
    /// stopped): do nothing more that must not happen twice. It is handed
    /// back as [`Job::saved`] whenever the step runs again. A job outside a
    /// runner saves nothing and answers true.
    pub async fn checkpoint(&self, mut state: Value, usage: Usage) -> bool {
        let Some(Checkpoints(tx)) = &self.saves else { return true };
        self.secrets.redaction().value(&mut state);
        let (saved, answer) = tokio::sync::oneshot::channel();
        let ask = Checkpoint { slot: self.slot, attempt: self.attempt, state, usage, saved };
        if tx.send(ask).is_err() {
            return false;
        }
        answer.await.unwrap_or(false)
    }

    /// This attempt's own key, `run:step[#item]:attempt`: its
    /// `idempotency_key` when it has an outside effect, and the same
    /// words for a step that keys its own writes (a sub-run, a battle, a
    /// rate-limit pass).
    pub fn attempt_key(&self) -> String {
        self.idempotency_key
            .clone()
            .unwrap_or_else(|| attempt_key(self.run, &self.node().key, self.slot, self.attempt))
    }
}

/// `run:step[#item]:attempt`: the same for every try of one attempt, also
/// after a takeover.
pub(crate) fn attempt_key(run: RunId, step: &str, slot: Slot, attempt: u32) -> String {
    let item = slot.item.map(|i| format!("#{i}")).unwrap_or_default();
    format!("{run}:{step}{item}:{attempt}")
}

/// What an attempt that did not fail gives: its output, or that it
/// cannot go on yet.
#[derive(Clone, Debug, PartialEq)]
pub struct Done {
    pub output: Value,
    pub usage: Usage,
    /// Set when the attempt cannot go on before this time (a full
    /// rate-limit window): the engine runs the same attempt again then, on
    /// a durable timer ([`lf_workflow::engine::Event::NodeDeferred`]); the
    /// output and usage are not recorded.
    pub again_at: Option<Timestamp>,
    /// Set when the attempt waits (for a person's decision): it is kept as
    /// it is ([`Hold::state`], handed back as [`Job::saved`]), the usage is
    /// recorded, and the same attempt runs again at [`Wait::until`] or when
    /// the run is woken ([`lf_workflow::run::RunService::wake_waiting`]);
    /// the output is not recorded.
    pub hold: Option<Hold>,
    /// The line the attempt wrote to the run's log (a `logger` step's):
    /// kept with the step's result and written to the server's log.
    pub log: Option<LogLine>,
}

/// What a waiting attempt keeps, and what it waits for.
#[derive(Clone, Debug, PartialEq)]
pub struct Hold {
    pub state: Value,
    pub wait: Wait,
}

impl Done {
    pub fn output(output: Value) -> Self {
        Done::with_usage(output, Usage::default())
    }

    pub fn with_usage(output: Value, usage: Usage) -> Self {
        Done { output, usage, again_at: None, hold: None, log: None }
    }

    /// Not yet: run this attempt again at `at`.
    pub fn again_at(at: Timestamp) -> Self {
        Done { again_at: Some(at), ..Done::output(Value::Null) }
    }

    /// Waits, keeping `state`, for what `wait` says (see [`Done::hold`]).
    pub fn hold(state: Value, usage: Usage, wait: Wait) -> Self {
        Done { hold: Some(Hold { state, wait }), ..Done::with_usage(Value::Null, usage) }
    }
}

/// Runs attempts of the node types it is registered for.
#[async_trait]
pub trait Executor: Send + Sync {
    async fn execute(&self, job: &Job) -> Result<Done, Failure>;
}

/// The executors of a runner, by node type.
#[derive(Clone, Default)]
pub struct Executors {
    by_type: HashMap<String, Arc<dyn Executor>>,
}

impl Executors {
    /// No executor at all.
    pub fn none() -> Self {
        Self::default()
    }

    /// The pure node types of [`lf_workflow::exec`] (the rows of steps.rs's
    /// table that `Pure` runs).
    pub fn pure() -> Self {
        let pure: Arc<dyn Executor> = Arc::new(Pure);
        Self::none().fill(|runs| (runs == Runs::Pure).then(|| pure.clone()))
    }

    /// Adds (or replaces) the executor of `node_type`.
    pub fn with(mut self, node_type: &str, executor: Arc<dyn Executor>) -> Self {
        self.by_type.insert(node_type.to_owned(), executor);
        self
    }

    /// The executor of `node_type`, if it has one.
    pub fn get(&self, node_type: &str) -> Option<Arc<dyn Executor>> {
        self.by_type.get(node_type).cloned()
    }

    /// Whether `node_type` has an executor.
    pub fn handles(&self, node_type: &str) -> bool {
        self.by_type.contains_key(node_type)
    }

    /// Runs `job` with its type's executor. What it gives back (output,
    /// error, log line, held state) passes the redaction of the saved
    /// connections it opened ([`Job::secrets`]): the one place a step's
    /// result is redacted, before the runner stores or logs any of it.
    pub async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        let t = job.node().node_type.as_str();
        let result = match self.by_type.get(t) {
            Some(e) => e.execute(job).await,
            None => Err(Failure::new(
                "not_executable",
                format!(
                    "this server has no executor for node type {t}; remove step {} or replace it",
                    job.node().key
                ),
            )),
        };
        let r = job.secrets.redaction();
        if r.is_empty() {
            return result;
        }
        match result {
            Ok(mut done) => {
                r.value(&mut done.output);
                if let Some(line) = &mut done.log {
                    line.message = r.text(&line.message).into_owned();
                }
                if let Some(hold) = &mut done.hold {
                    r.value(&mut hold.state);
                }
                Ok(done)
            }
            Err(f) => Err(Failure::new(f.code, r.text(&f.message))),
        }
    }
}

/// The pure types: a function of the node's config and input.
pub(crate) struct Pure;

#[async_trait]
impl Executor for Pure {
    async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        let node = job.node();
        // merge combines everything that reached it; the others work on their main input.
        let input = if node.node_type == "merge" { &job.input } else { main_input(&job.input) };
        match run_pure(&node.node_type, &node.config, input) {
            Some(Ok(ran)) => Ok(Done { log: ran.log, ..Done::output(ran.output) }),
            Some(Err(e)) => Err(Failure::new(e.code.as_str(), e.message)),
            None => {
                Err(Failure::new("not_executable", format!("{} is not a pure node type", node.node_type)))
            }
        }
    }
}
