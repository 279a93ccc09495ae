//! Experiments' contenders other than model profiles (lf-eval's
//! [`Contender`]): checked and pinned when an experiment starts
//! ([`ExperimentContenders`] as lf-eval's [`ContenderCheck`], as the
//! caller), made ready when its cells are walked ([`ready`], as the
//! experiment's owner) and asked one attempt of a cell at a time
//! ([`attempt`]).
//!
//! - a model profile: asked the case (its prompt, or its inputs as JSON);
//! - an AI Lenser the owner can see: as battle asks answer for one
//!   (`asks::ai_lenser`: its persona as the system message, its model);
//! - a lens version sent to a profile: the version pinned at start (a
//!   label is read once, then the version it pointed at is kept) rendered
//!   with the case's inputs (each value a string as is, else its JSON
//!   text); a prompt case fills a lens of exactly one parameter, else the
//!   cell fails saying so;
//! - a workflow: its head version at start, run as the owner with the
//!   case's inputs (a prompt case as `{"prompt": …}`) under an idempotency
//!   key made of the cell (experiment, position, contender, repeat), so an
//!   attempt after a kill or a takeover finds the run it started (within
//!   the key's 24 hours) instead of starting another; the run is waited
//!   for, and its output answers (a string as is, an object of one string
//!   as that string, else the JSON text); a run that does not complete
//!   fails the cell with its error. Its latency is the run's duration, its
//!   tokens the run's (all counted as input), its dollars 0: runs record
//!   credits, not dollars.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use lf_agent::{AgentFilter, AgentHandle};
use lf_core::{
    ErrorCode, LenserId, LfError, LfResult, ModelResolver, PageRequest, Principal, ResolvedModel, Scopes,
    VersionId,
};
use lf_eval::dataset::{Case, CaseInput};
use lf_eval::experiment::{CellKey, Contender, ContenderCheck, ContenderForm};
use lf_lens::{Lens, LensService, LensVersion, ParamValues, Semver, VersionSelector};
use lf_workflow::JsonObject;
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{IdempotencyKey, RunService, StartRun};
use serde_json::Value;

use crate::asks::{again_after, ai_lenser};
use crate::compose::OwnServices;
use crate::experiments::Attempt;

/// The system message of a model asked a case.
pub(crate) const SYSTEM: &str = "Answer the question or task directly.";
/// What an AI Lenser answers, in its default system message.
const ANSWERING: &str = "a question";

/// Checks and pins experiments' contenders, and makes them ready (see the
/// module's docs).
#[derive(Clone)]
pub struct ExperimentContenders {
    own: OwnServices,
    lenses: LensService,
    resolver: Arc<dyn ModelResolver>,
}

fn not_found(why: String) -> LfError {
    LfError::new(ErrorCode::NotFound, why)
}

impl ExperimentContenders {
    /// AI Lensers and workflows through `own` (once bound), lenses through
    /// `lenses`, model profiles through `resolver`.
    pub fn new(own: OwnServices, lenses: LensService, resolver: Arc<dyn ModelResolver>) -> Self {
        Self { own, lenses, resolver }
    }

    /// The idempotency key of the workflow run of cell `key`: every
    /// attempt at the cell, in any process, names the same run.
    pub fn run_key(key: CellKey) -> String {
        format!("experiment:{}:{}:{}:{}", key.experiment, key.position, key.contender, key.repeat)
    }

    /// The AI Lenser `named` (an id, or the handle of one `p` holds a role
    /// in) that `p` can see.
    async fn lenser(&self, p: &Principal, named: &str) -> LfResult<LenserId> {
        let missing = || not_found(format!("No AI Lenser {named} that you can see."));
        if let Ok(id) = LenserId::parse("contenders", named) {
            return Ok(id);
        }
        let (Ok(handle), Some(me), Some(teams)) = (AgentHandle::parse(named), p.lenser(), self.own.teams())
        else {
            return Err(missing());
        };
        let filter = AgentFilter { lenser: Some(me), ..AgentFilter::default() };
        let mut offset = 0;
        loop {
            let page = teams.agents().list(p, &filter, PageRequest::new(Some(100), Some(offset))?).await?;
            if let Some(a) = page.items.iter().find(|a| a.handle == handle) {
                return Ok(a.id);
            }
            if page.items.len() < 100 {
                return Err(missing());
            }
            offset += 100;
        }
    }
}

/// The version a lens contender names: a semver, a version id, or a label.
fn selector(which: &str) -> LfResult<VersionSelector> {
    if let Ok(v) = Semver::parse(which) {
        return Ok(VersionSelector::Semver(v));
    }
    if let Ok(id) = VersionId::parse("contenders", which) {
        return Ok(VersionSelector::Id(id));
    }
    VersionSelector::label("contenders", which)
}

#[async_trait]
impl ContenderCheck for ExperimentContenders {
    async fn check(&self, p: &Principal, given: &str, form: ContenderForm<'_>) -> LfResult<Contender> {
        let given = given.to_owned();
        match form {
            ContenderForm::Model(model) => {
                self.resolver.resolve(p, "contenders", model).await?;
                Ok(Contender::model(model))
            }
            ContenderForm::Lenser(named) => {
                let lenser = self.lenser(p, named).await?;
                match ai_lenser(&self.own, self.resolver.as_ref(), p, lenser, ANSWERING).await? {
                    Some(_) => Ok(Contender::Lenser { given, lenser }),
                    None => Err(not_found(format!("No AI Lenser {named} that you can see."))),
                }
            }
            ContenderForm::Lens { lens, which, model } => {
                let view = self.lenses.view(p, lens, selector(which)?).await?;
                self.resolver.resolve(p, "contenders", model).await?;
                Ok(Contender::Lens { given, lens, version: view.version.id, model: model.to_owned() })
            }
            ContenderForm::Workflow(id) => {
                let bound = self.own.bound().ok_or_else(|| {
                    LfError::invalid_argument("This server runs no workflows, so no workflow contenders.")
                })?;
                match bound.workflows.get_workflow(p.reach(), id).await {
                    Ok(w) => Ok(Contender::Workflow { given, workflow: id, version: w.head_version }),
                    Err(e) if e.code() == ErrorCode::NotFound => {
                        Err(not_found(format!("No workflow {id} that you can read.")))
                    }
                    Err(e) => Err(e),
                }
            }
        }
    }
}

/// A contender made ready to answer an experiment's cells.
pub(crate) enum Ready {
    /// A model asked with this system message (a profile's, or an AI
    /// Lenser's persona).
    Model(ResolvedModel, String),
    Lens(ResolvedModel, Box<(Lens, LensVersion)>),
    Workflow {
        runs: Arc<RunService>,
        start: StartRun,
        owner: Principal,
    },
}

/// `c` made ready as the experiment's owner `owner` (who reads), or why it
/// cannot answer (each of its cells fails with it).
pub(crate) async fn ready(
    kinds: Option<&ExperimentContenders>,
    resolver: &dyn ModelResolver,
    owner: &Principal,
    c: &Contender,
) -> Result<Ready, String> {
    let unusable = |err: LfError| format!("The contender {} could not be used: {}", c.key(), err.message());
    let kinds = match (c, kinds) {
        (Contender::Model { model }, _) => {
            let m = resolver.resolve(owner, "contenders", model).await;
            return m.map(|m| Ready::Model(m, SYSTEM.to_owned())).map_err(|err| {
                format!("The contender's model {model} could not be used: {}", err.message())
            });
        }
        (_, Some(kinds)) => kinds,
        (_, None) => return Err(format!("This runner does not ask contenders such as {}.", c.key())),
    };
    match c {
        Contender::Model { .. } => unreachable!("answered above"),
        Contender::Lenser { lenser, .. } => {
            match ai_lenser(&kinds.own, resolver, owner, *lenser, ANSWERING).await.map_err(unusable)? {
                Some((model, system)) => Ok(Ready::Model(model, system)),
                None => Err(format!("The AI Lenser {} is not one the experiment's owner can see.", c.key())),
            }
        }
        Contender::Lens { lens, version, model, .. } => {
            let view =
                kinds.lenses.view(owner, *lens, VersionSelector::Id(*version)).await.map_err(unusable)?;
            let model = resolver.resolve(owner, "contenders", model).await.map_err(unusable)?;
            Ok(Ready::Lens(model, Box::new((view.lens, view.version))))
        }
        Contender::Workflow { workflow, version, .. } => {
            let bound =
                kinds.own.bound().ok_or_else(|| "The workflow runner is not bound yet.".to_owned())?;
            let lenser = owner.lenser().ok_or_else(|| "The experiment has no owner.".to_owned())?;
            let start =
                StartRun { workflow_id: Some(*workflow), version: Some(*version), ..StartRun::default() };
            let owner = Principal::Lenser { id: lenser, scopes: Scopes::READ_WRITE };
            Ok(Ready::Workflow { runs: bound.runs.clone(), start, owner })
        }
    }
}

/// What a case asks: its prompt, or its inputs as JSON.
pub(crate) fn question(case: &Case) -> String {
    match &case.input {
        CaseInput::Prompt(p) => p.clone(),
        CaseInput::Inputs(o) => Value::Object(o.clone()).to_string(),
    }
}

/// One attempt at cell `key` of `case` by the contender `ready`.
pub(crate) async fn attempt(ready: &Ready, key: CellKey, case: &Case) -> Attempt {
    match ready {
        Ready::Model(model, system) => ask(model, system, question(case)).await,
        Ready::Lens(model, lens) => match render(&lens.0, &lens.1, case) {
            Ok(text) => ask(model, SYSTEM, text).await,
            Err(why) => Attempt::Failed(why),
        },
        Ready::Workflow { runs, start, owner } => run(runs, start, owner, key, case).await,
    }
}

/// `model` asked once.
async fn ask(model: &ResolvedModel, system: &str, user: String) -> Attempt {
    let request = model.request(system, user);
    let started = Instant::now();
    match model.provider.chat(request.clone()).await {
        Ok(answer) => {
            let elapsed = started.elapsed().as_millis() as u64;
            let cost = model.cost(&request, &answer, elapsed, lf_lens::estimate_tokens);
            Attempt::Answered {
                text: answer.text,
                input: cost.input_tokens,
                output: cost.output_tokens,
                cost_usd: cost.cost_usd,
                latency_ms: cost.total_ms,
            }
        }
        Err(e) => match again_after(&e) {
            Some(wait) => Attempt::Again(wait, e.message().to_owned()),
            None => Attempt::Failed(format!("The model could not be asked: {}", e.message())),
        },
    }
}

/// A value as a lens parameter or a step's text: a string as is, else its
/// JSON text.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The lens version rendered with the case's inputs.
fn render(lens: &Lens, version: &LensVersion, case: &Case) -> Result<String, String> {
    let values = match &case.input {
        CaseInput::Inputs(o) => ParamValues::parse("inputs", o.iter().map(|(k, v)| (k.clone(), text(v)))),
        CaseInput::Prompt(p) => match version.params.as_slice() {
            [one] => Ok(ParamValues::new().insert(one.label.clone(), p.clone())),
            params => {
                return Err(format!(
                    "Case {} is a prompt, which fills a lens of exactly one parameter; this lens version has {}: \
                     give the case inputs.",
                    case.position,
                    params.len()
                ));
            }
        },
    };
    let values = values.map_err(|e| format!("The case's inputs do not fit the lens: {}", e.message()))?;
    LensService::resolve(lens, version, &values)
        .map(|(text, _)| text)
        .map_err(|e| format!("The lens could not be rendered for case {}: {}", case.position, e.message()))
}

/// A workflow run for `key` started (or found by its key) and waited for.
async fn run(runs: &RunService, start: &StartRun, owner: &Principal, key: CellKey, case: &Case) -> Attempt {
    let Ok(idempotency) = IdempotencyKey::parse("idempotency_key", &ExperimentContenders::run_key(key))
    else {
        return Attempt::Failed("The cell's run key is malformed.".into());
    };
    let inputs = match &case.input {
        CaseInput::Inputs(o) => o.clone(),
        CaseInput::Prompt(p) => JsonObject::from_iter([("prompt".to_owned(), Value::String(p.clone()))]),
    };
    let start = StartRun { inputs, idempotency_key: Some(idempotency), ..start.clone() };
    let id = match runs.start(owner, start).await {
        Ok(s) => s.run.id,
        Err(e) => {
            return match again_after(&e) {
                Some(wait) => Attempt::Again(wait, e.message().to_owned()),
                None => Attempt::Failed(format!("The workflow could not be run: {}", e.message())),
            };
        }
    };
    let ended = match crate::compose::wait(runs, id).await {
        Ok(run) => run,
        Err(f) => return Attempt::Again(Duration::from_secs(1), f.message),
    };
    let state = &ended.state;
    if ended.status() != RunStatus::Completed {
        let why = state.error.as_ref().map_or_else(|| ended.status().to_string(), |e| e.message.clone());
        return Attempt::Failed(format!("The workflow's run {id} ended {}: {why}", ended.status()));
    }
    let text = match state.result.as_ref().unwrap_or(&Value::Null) {
        Value::Object(o) if o.len() == 1 && o.values().all(Value::is_string) => {
            o.values().next().map(self::text).unwrap_or_default()
        }
        other => self::text(other),
    };
    let took = match (state.started_at, state.finished_at) {
        (Some(a), Some(b)) => (b.as_micros() - a.as_micros()).max(0) as u64 / 1_000,
        _ => 0,
    };
    Attempt::Answered { text, input: state.usage().tokens, output: 0, cost_usd: 0.0, latency_ms: took }
}
