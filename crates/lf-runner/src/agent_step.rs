//! The `agent_execute` step: an AI Lenser's tool-calling loop
//! ([`crate::agent_loop`]) as one step of a workflow run, durable across
//! restarts, with an approval wait for destructive calls.
//!
//! - The agent (`ai_lenser_id`) is read as the run's starter reads it: the
//!   starter must be one the agent acts for (its owner, a co-owner, an
//!   operator; in a team run, the agent's owner). Its persona is the
//!   system message; its model (`profile.model`), else the run's
//!   `global_model_id`, else the provider's default, is asked: with a
//!   resolver bound, a profile's name or id, an operator endpoint or a
//!   bare model name on `default`, as the agent's owner may use it
//!   ([`lf_core::agent_model`]), asked on its endpoint. `prompt` is
//!   the first user message, its `[[name]]` placeholders filled from the
//!   step's input parameters (as `prompt_template` fills its template) or
//!   else the fields of its main input (as `battle_create` does).
//! - The model is offered the tools [`AgentTools`] gives for the agent
//!   (its granted catalog tools); each call it asks for is checked before
//!   it runs, one at a time. A refused call is not run: the refusal is its
//!   result, which the model reads.
//! - Caps: `max_turns` (default 10), `max_tool_calls` (20), `max_tokens`
//!   (100,000, and no more than the run's credits left buy at the
//!   [`Pricing`] rate) and `timeout_s` (300 s of work in one go; the
//!   attempt is given 5 s more). Reaching one ends the step, not the run:
//!   its output is `{stopped: "max_turns" | "budget" | "time",
//!   last_answer, model, turns, tool_calls, tokens}`; an answer gives
//!   `{text, model, turns, tool_calls, tokens}`. Tokens are charged to the
//!   run as model steps charge them (`ceil(tokens × rate / 1000)` credits).
//! - Durable: the loop's state is saved under the run's lease
//!   ([`crate::Job::checkpoint`]) after each answer of the model, before
//!   each call runs and after its result. An attempt that runs again (a
//!   takeover after a restart, a retry) goes on from the last save: it
//!   does not ask the model again for what it answered, and runs no call
//!   twice. A call that was running when the process died is not run
//!   again; the model is told its outcome is unknown (at most once, never
//!   twice).
//! - Approval: a call of a Destructive tool ([`Check::NeedsApproval`]) is
//!   held. The step saves the held call, then records `Move::HoldCall` on
//!   the run's team run (which then awaits approval, its
//!   `approval_requested` event naming the step, the tool and the call),
//!   then waits ([`crate::Done::hold`]: the step stays running, shown as
//!   `waiting_for: "approval of <tool>"`, holding no runner and no place
//!   under the parallel bound; the wait does not count against the run's
//!   time limit). An owner decides with `decide_agent_approval`, which
//!   records `approval_granted` or `approval_rejected` on the team run
//!   before anything runs, and wakes the step; a step whose wake was lost
//!   looks again every [`RECHECK`]. Approved, the held call runs once (then
//!   the other calls of the same answer), and the model is asked with its
//!   result, not asked again for the call; rejected, the rejection and
//!   its reason are the call's result. Outside a team run nobody can
//!   approve a call: a Destructive call is refused, saying so.
//! - In a team run of the step's agent, every call's outcome is recorded
//!   on the team run as `tool_called` (the step's key, the tool, the
//!   outcome), in the order the calls were made, once each call's state
//!   is saved.
//! - The offline provider calls no tool: it answers at once with a
//!   stand-in text under its own name.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use lf_agent::team::Move;
use lf_agent::{Agent, AgentService, EventFilter, TeamEventKind, TeamRunId};
use lf_core::{
    BattleId, ChatRequest, Clock, ContenderId, ErrorCode, LenserId, LfError, LfResult, ModelProvider,
    PageRequest, Principal, Scopes, SystemClock, ToolCall, ToolSpec,
};
use lf_workflow::engine::{Failure, Usage, Wait, main_input};
use lf_workflow::exec::fill_placeholders;
use serde_json::{Value, json};

use crate::agent_loop::{
    Caps, Check, LoopEnd, LoopState, Outcome, Resume, Saver, ToolBox, call_from_json, call_json,
    run_loop_with,
};
use crate::compose::OwnServices;
use crate::executor::{Done, Executor, Executors, Job};
use crate::model::{Pricing, model_failure, resolve_failure};
use crate::steps::Runs;
use crate::teams::{SERVICE, moved, team_of};

/// How often a step waiting for approval looks for the decision when
/// nobody woke it.
pub const RECHECK: Duration = Duration::from_secs(60);

/// The tools an agent may call from a workflow step: given by the
/// composition root (over the tool catalog), asked once per attempt.
#[async_trait]
pub trait AgentTools: Send + Sync {
    /// The tool box of `agent` in a run that acts as `starter`: its
    /// [`ToolBox::tools`] are the catalog tools granted to the agent; its
    /// check refuses a tool that is not granted and answers
    /// [`Check::NeedsApproval`] for a Destructive one; its call runs the
    /// tool as the agent, for `starter` (checked again, counted against the
    /// agent's caps, logged in its action log), a refusal at that point
    /// being the call's error. An error here (the starter may not act for
    /// the agent) fails the step.
    async fn toolbox(&self, starter: LenserId, agent: LenserId) -> LfResult<Box<dyn ToolBox>>;

    /// Has `agent` answer `battle` as its contender `contender`, for
    /// `starter`: the same call as `run_agent_action` with the action word
    /// `answer_battle` (the starter must act for the agent; checked and
    /// counted against its policy, caps and credits; the model asked with
    /// its persona and model; the answer submitted as the agent's; written
    /// to its action log). Answers what `submit_battle_run` answers
    /// (`id`: the submission's id). A refusal or a failure is its error,
    /// as the call gave it.
    async fn answer_battle(
        &self,
        starter: LenserId,
        agent: LenserId,
        battle: BattleId,
        contender: ContenderId,
    ) -> LfResult<Value>;
}

/// The `agent_execute` step's executor.
pub struct AgentSteps {
    model: Arc<dyn ModelProvider>,
    tools: Arc<dyn AgentTools>,
    own: OwnServices,
    pricing: Pricing,
}

impl AgentSteps {
    /// Asks `model`, with the tools `tools` gives; reads agents and records
    /// on team runs through `own` (bound with
    /// [`OwnServices::bind`] and [`OwnServices::bind_agents`]: until then
    /// the step fails with `not_ready`); charges tokens at `pricing`.
    pub fn new(
        model: Arc<dyn ModelProvider>,
        tools: Arc<dyn AgentTools>,
        own: OwnServices,
        pricing: Pricing,
    ) -> Self {
        AgentSteps { model, tools, own, pricing }
    }

    /// `executors` with `agent_execute` (a runner with this step alone;
    /// [`Executors::all`] has every step).
    pub fn register(self, executors: Executors) -> Executors {
        let me: Arc<dyn Executor> = Arc::new(self);
        executors.fill(|runs| (runs == Runs::Agent).then(|| me.clone()))
    }
}

/// What the step keeps between its runs (its checkpoint).
#[derive(Clone, Debug, Default)]
struct Saved {
    state: LoopState,
    /// The usage already told to the run.
    charged: Usage,
    held: Option<Held>,
}

/// A call waiting for approval.
#[derive(Clone, Debug)]
struct Held {
    call: ToolCall,
    /// The `seq` of the team run's `approval_requested` event for it, once
    /// recorded.
    asked: Option<u32>,
}

impl Saved {
    fn to_json(&self) -> Value {
        let c = &self.charged;
        json!({
            "loop": self.state.to_json(),
            "charged": {"model_calls": c.model_calls, "tokens": c.tokens, "credits": c.credits},
            "held": self.held.as_ref().map(|h| json!({"call": call_json(&h.call), "asked": h.asked})),
        })
    }

    fn from_json(v: &Value) -> Option<Saved> {
        let c = v.get("charged")?;
        let held = match v.get("held")? {
            Value::Null => None,
            h => Some(Held {
                call: call_from_json(h.get("call")?)?,
                asked: h.get("asked").and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok()),
            }),
        };
        Some(Saved {
            state: LoopState::from_json(v.get("loop")?)?,
            charged: Usage {
                model_calls: u32::try_from(c.get("model_calls")?.as_u64()?).ok()?,
                tokens: c.get("tokens")?.as_u64()?,
                credits: c.get("credits")?.as_u64()?,
            },
            held,
        })
    }
}

/// The team run an attempt records on: the agent's and the team run's ids.
type Team = (LenserId, TeamRunId);

/// One attempt: what it knows, and what it has told.
struct Attempt<'a> {
    job: &'a Job,
    agents: &'a AgentService,
    /// The run's team run, when it is one of the step's agent.
    team: Option<Team>,
    pricing: Pricing,
    tools: StepTools<'a>,
    charged: Mutex<Usage>,
    /// Set when a save failed: the loop stopped, nothing more runs.
    lost: std::sync::atomic::AtomicBool,
}

/// The agent's tool box as the step offers it: what it heard is recorded
/// on the team run, and outside a team run a call that needs approval is
/// refused.
struct StepTools<'a> {
    inner: &'a dyn ToolBox,
    in_team: bool,
    heard: Mutex<Vec<(ToolCall, Outcome)>>,
}

/// Why a call needing approval is refused outside a team run.
fn no_approver(tool: &str) -> String {
    format!(
        "{tool} is a destructive tool: it runs only once an owner approves the call, which an agent_execute step can ask for only in a team run of its agent (start_agent_team_run). It was not run."
    )
}

#[async_trait]
impl ToolBox for StepTools<'_> {
    fn tools(&self) -> Vec<ToolSpec> {
        self.inner.tools()
    }

    async fn check(&self, call: &ToolCall) -> Check {
        match self.inner.check(call).await {
            Check::NeedsApproval if !self.in_team => Check::Refused(no_approver(&call.name)),
            c => c,
        }
    }

    async fn call(&self, call: &ToolCall) -> Result<String, String> {
        self.inner.call(call).await
    }

    fn record(&self, call: &ToolCall, outcome: &Outcome) {
        self.inner.record(call, outcome);
        self.heard.lock().unwrap_or_else(|p| p.into_inner()).push((call.clone(), outcome.clone()));
    }
}

fn outcome_text(o: &Outcome) -> String {
    match o {
        Outcome::Ran => "ran".into(),
        Outcome::Failed(e) => format!("failed: {e}"),
        Outcome::Refused(why) => format!("refused: {why}"),
        Outcome::Held => "held for approval".into(),
        Outcome::Rejected(why) => format!("rejected: {why}"),
    }
}

pub(crate) fn store_failure(e: &LfError) -> Failure {
    Failure::new("store", e.message().to_owned())
}

pub(crate) fn lost() -> Failure {
    Failure::new(
        "lease_lost",
        "the step's state could not be saved (another runner took the run, or the step was stopped); nothing more was run",
    )
}

/// The wait of a held `call`.
fn waiting(call: &ToolCall) -> Wait {
    Wait {
        until: SystemClock.now().plus_micros(RECHECK.as_micros() as i64),
        reason: format!("approval of {}", call.name),
    }
}

fn words(text: &str, n: usize) -> String {
    text.split_whitespace().take(n).collect::<Vec<_>>().join(" ")
}

impl Attempt<'_> {
    /// What the run has not been told of `state`'s usage yet (and now is).
    fn charge(&self, state: &LoopState) -> Usage {
        let mut charged = self.charged.lock().unwrap_or_else(|p| p.into_inner());
        let credits = (state.tokens * self.pricing.credits_per_1k_tokens).div_ceil(1_000);
        let delta = Usage {
            model_calls: state.model_calls.saturating_sub(charged.model_calls),
            tokens: state.tokens.saturating_sub(charged.tokens),
            credits: credits.saturating_sub(charged.credits),
        };
        *charged = Usage {
            model_calls: state.model_calls,
            tokens: state.tokens,
            credits: credits.max(charged.credits),
        };
        delta
    }

    fn charged(&self) -> Usage {
        *self.charged.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Saves `state` (and `held`), then records what the tool box heard.
    async fn save(&self, state: &LoopState, held: Option<Held>) -> Result<(), Failure> {
        let usage = self.charge(state);
        let saved = Saved { state: state.clone(), charged: self.charged(), held };
        if !self.job.checkpoint(saved.to_json(), usage).await {
            return Err(lost());
        }
        self.flush().await;
        Ok(())
    }

    /// Records the calls heard so far on the team run, in order.
    async fn flush(&self) {
        let heard = std::mem::take(&mut *self.tools.heard.lock().unwrap_or_else(|p| p.into_inner()));
        let Some((agent, team)) = self.team else { return };
        for (call, outcome) in heard {
            let mv = Move::ToolCalled {
                node: Some(self.job.node().key.clone()),
                tool: call.name.clone(),
                outcome: outcome_text(&outcome),
            };
            if let Err(e) = moved(self.agents.record_progress(&SERVICE, agent, team, mv).await) {
                tracing::warn!(team_run = %team, %agent, error = %e, "a tool call was not recorded on its team run");
            }
        }
    }

    /// Records `call` as held on the team run: the `seq` of its
    /// `approval_requested` event, or `None` while another step of the run
    /// holds one (asked again at the next look).
    async fn ask(&self, (agent, team): Team, call: &ToolCall) -> Result<Option<u32>, Failure> {
        let node = self.job.node().key.clone();
        let what = format!("{} {}", call.name, lf_core::clip(&call.arguments, 1_500));
        let mv = Move::HoldCall { node: node.clone(), tool: call.name.clone(), call: what };
        match self.agents.record_progress(&SERVICE, agent, team, mv).await {
            Ok(u) => Ok(u.events.last().map(|e| e.seq)),
            Err(e) if e.code() == ErrorCode::InvalidTransition => {
                // Asked already (before a restart), or another step holds a call.
                let run =
                    self.agents.get_team_run(&SERVICE, agent, team).await.map_err(|e| store_failure(&e))?;
                if !lf_agent::team::holds_call(&run) {
                    return Ok(None);
                }
                let last = self.events(team, agent, TeamEventKind::ApprovalRequested).await?;
                Ok(last
                    .into_iter()
                    .max_by_key(|e| e.0)
                    .filter(|(_, n, t)| {
                        n.as_deref() == Some(node.as_str()) && t.as_deref() == Some(call.name.as_str())
                    })
                    .map(|e| e.0))
            }
            Err(e) => Err(store_failure(&e)),
        }
    }

    /// The newest events of `kind` of the team run: seq, node, tool (note
    /// for decisions).
    async fn events(
        &self,
        team: TeamRunId,
        agent: LenserId,
        kind: TeamEventKind,
    ) -> Result<Vec<(u32, Option<String>, Option<String>)>, Failure> {
        let filter = EventFilter { team_run: Some(team), kind: Some(kind) };
        let page =
            PageRequest::new(Some(PageRequest::MAX_LIMIT as i64), None).map_err(|e| store_failure(&e))?;
        let listed =
            self.agents.list_events(&SERVICE, agent, &filter, page).await.map_err(|e| store_failure(&e))?;
        Ok(listed
            .items
            .into_iter()
            .map(|e| {
                let second =
                    if kind == TeamEventKind::ApprovalRequested { e.detail.tool } else { e.detail.note };
                (e.seq, e.detail.node, second)
            })
            .collect())
    }

    /// The decision on the call asked for as event `asked`: approved
    /// (`Ok`), rejected with why (`Err`), or none yet.
    async fn decision(&self, (agent, team): Team, asked: u32) -> Result<Option<Result<(), String>>, Failure> {
        let mut first: Option<(u32, Result<(), String>)> = None;
        for kind in [TeamEventKind::ApprovalGranted, TeamEventKind::ApprovalRejected] {
            for (seq, _, note) in self.events(team, agent, kind).await? {
                if seq > asked && first.as_ref().is_none_or(|f| seq < f.0) {
                    let d = if kind == TeamEventKind::ApprovalGranted {
                        Ok(())
                    } else {
                        Err(note.unwrap_or_else(|| "no reason given".to_owned()))
                    };
                    first = Some((seq, d));
                }
            }
        }
        if let Some((_, d)) = first {
            return Ok(Some(d));
        }
        let run = self.agents.get_team_run(&SERVICE, agent, team).await.map_err(|e| store_failure(&e))?;
        if run.status.is_finished() {
            return Ok(Some(Err(format!("its team run is {} and approves nothing more", run.status))));
        }
        Ok(None)
    }

    /// Saves the loop waiting on `call`, records it as held, and waits.
    async fn hold(&self, state: LoopState, call: ToolCall) -> Result<Done, Failure> {
        // Saved first: a restart before it is asked for asks at the next look.
        self.save(&state, Some(Held { call: call.clone(), asked: None })).await?;
        let asked = match self.team {
            Some(team) => self.ask(team, &call).await?,
            None => None,
        };
        self.still_held(state, Held { call, asked })
    }

    /// Waits on `held` again.
    fn still_held(&self, state: LoopState, held: Held) -> Result<Done, Failure> {
        let wait = waiting(&held.call);
        let saved = Saved { state, charged: self.charged(), held: Some(held) };
        Ok(Done::hold(saved.to_json(), Usage::default(), wait))
    }
}

#[async_trait]
impl Saver for Attempt<'_> {
    async fn save(&self, state: &LoopState) -> LfResult<()> {
        let saved = Attempt::save(self, state, None).await;
        if saved.is_err() {
            self.lost.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        saved.map_err(|f| LfError::internal(f.message))
    }
}

/// The step's config, read.
struct Config {
    agent: LenserId,
    prompt: String,
    caps: Caps,
}

fn read_config(job: &Job) -> Result<Config, Failure> {
    let config = &job.node().config;
    let invalid = |what: &str| Failure::new("config_invalid", what.to_owned());
    let agent = config
        .get("ai_lenser_id")
        .and_then(Value::as_str)
        .and_then(|s| lf_core::parse_uuid("ai_lenser_id", s).ok())
        .map(LenserId::from_uuid)
        .ok_or_else(|| invalid("agent_execute needs ai_lenser_id, an AI Lenser's id"))?;
    let prompt = config.get("prompt").and_then(Value::as_str).unwrap_or_default();
    if prompt.trim().is_empty() {
        return Err(invalid("agent_execute needs a prompt: what the agent is asked to do"));
    }
    let n = |k: &str, d: u64| config.get(k).and_then(Value::as_u64).unwrap_or(d);
    let d = Caps::default();
    let caps = Caps {
        max_turns: n("max_turns", u64::from(d.max_turns)).min(u64::from(u32::MAX)) as u32,
        max_tool_calls: n("max_tool_calls", u64::from(d.max_tool_calls)).min(u64::from(u32::MAX)) as u32,
        max_tokens: n("max_tokens", d.max_tokens),
        max_time: Duration::from_secs(n("timeout_s", d.max_time.as_secs())),
    };
    Ok(Config { agent, prompt: fill_placeholders(prompt, &placeholders(&job.input)), caps })
}

/// What `[[name]]` may name: the step's input parameters, and the fields
/// of its main input (a team run's inputs, say); a parameter first.
fn placeholders(input: &Value) -> Value {
    let mut all = match main_input(input) {
        Value::Object(fields) => fields.clone(),
        _ => serde_json::Map::new(),
    };
    if let Value::Object(params) = input {
        all.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    Value::Object(all)
}

/// The agent, as the run's starter reads it.
async fn agent_for(agents: &AgentService, starter: LenserId, id: LenserId) -> Result<Agent, Failure> {
    let as_starter = Principal::Lenser { id: starter, scopes: Scopes::READ };
    let agent = match agents.get(&as_starter, id).await {
        Ok(view) => view.agent,
        Err(e) if e.code() == ErrorCode::Internal => return Err(store_failure(&e)),
        Err(_) => {
            return Err(Failure::new(
                "not_found",
                format!("AI Lenser {id} is not one this run's starter ({starter}) owns or acts for"),
            ));
        }
    };
    if !agent.is_active() {
        return Err(Failure::new("invalid_input", format!("@{} is archived and acts no more", agent.handle)));
    }
    Ok(agent)
}

fn chat(agent: &Agent, job: &Job, prompt: String) -> ChatRequest {
    let p = &agent.profile;
    let system = match &p.persona {
        Some(persona) if !persona.as_str().trim().is_empty() => persona.as_str().to_owned(),
        _ => format!(
            "You are {} (@{}), an AI Lenser on LenserFight. Use the tools you are offered when they help, one step at a time; when you are done, answer in plain text.",
            p.display_name.as_str(),
            agent.handle
        ),
    };
    let mut r = ChatRequest::new(system, prompt.clone());
    r.model = p.model.as_ref().map(|m| m.as_str().to_owned()).or(job.global_model_id.clone());
    r.stand_in = Some(format!("Offline answer from @{} to: {}", agent.handle, words(&prompt, 40)));
    r
}

fn answer(state: &LoopState, end: &LoopEnd) -> Value {
    let mut out = match end {
        LoopEnd::Stopped(stop) => json!({"stopped": stop.as_str(), "last_answer": state.last_answer}),
        _ => json!({"text": state.last_answer}),
    };
    out["model"] = json!(state.model);
    out["turns"] = json!(state.model_calls);
    out["tool_calls"] = json!(state.tool_calls);
    out["tokens"] = json!(state.tokens);
    out
}

#[async_trait]
impl Executor for AgentSteps {
    async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        let not_ready = || Failure::new("not_ready", "the agent service is not bound to the runner yet");
        let bound = self.own.bound().ok_or_else(not_ready)?;
        let agents = self.own.teams().ok_or_else(not_ready)?.agents();
        let config = read_config(job)?;
        let agent = agent_for(agents, job.started_by, config.agent).await?;
        let inner = match self.tools.toolbox(job.started_by, agent.id).await {
            Ok(t) => t,
            Err(e) if e.code() == ErrorCode::Internal => return Err(store_failure(&e)),
            Err(e) => return Err(Failure::new("permission_denied", e.message().to_owned())),
        };
        let run = bound.runs.store().get_run(job.run).await.map_err(|e| store_failure(&e))?;
        let team = team_of(&run).filter(|(a, _)| *a == agent.id);

        let mut saved = job.saved.as_ref().and_then(Saved::from_json).unwrap_or_default();
        let held = saved.held.take();
        let at = Attempt {
            job,
            agents,
            team,
            pricing: self.pricing,
            tools: StepTools { inner: inner.as_ref(), in_team: team.is_some(), heard: Mutex::default() },
            charged: Mutex::new(saved.charged),
            lost: Default::default(),
        };
        let (model, chat) = self.asked(&agent, chat(&agent, job, config.prompt)).await?;
        let model = model.as_ref();
        let mut caps = config.caps;
        if let (Some(left), rate @ 1..) = (job.credits_left, self.pricing.credits_per_1k_tokens) {
            let affordable = saved.state.tokens.saturating_add(left.saturating_mul(1_000) / rate);
            caps.max_tokens = caps.max_tokens.min(affordable);
        }

        let resume = match held {
            None => Resume::Continue,
            Some(held) => {
                let Some(team) = team else {
                    let why = "nobody can approve a call outside a team run".to_owned();
                    return self
                        .finish(&at, model, &chat, caps, saved.state, Resume::Rejected(held.call, why))
                        .await;
                };
                let asked = match held.asked {
                    Some(seq) => Some(seq),
                    None => at.ask(team, &held.call).await?,
                };
                let Some(asked) = asked else {
                    return at.still_held(saved.state, Held { asked: None, ..held });
                };
                match at.decision(team, asked).await? {
                    None => return at.still_held(saved.state, Held { asked: Some(asked), ..held }),
                    Some(Ok(())) => Resume::Approved(held.call),
                    Some(Err(why)) => Resume::Rejected(held.call, why),
                }
            }
        };
        self.finish(&at, model, &chat, caps, saved.state, resume).await
    }
}

impl AgentSteps {
    /// Where `chat` is asked: the model it names resolved, with its
    /// endpoint's client and its profile's parameters, when a resolver is
    /// bound; else the step's provider, as it is.
    async fn asked(
        &self,
        agent: &Agent,
        mut chat: ChatRequest,
    ) -> Result<(Arc<dyn ModelProvider>, ChatRequest), Failure> {
        let Some(resolver) = self.own.resolver() else { return Ok((self.model.clone(), chat)) };
        let owner = Principal::Agent { agent_id: agent.id, owner: agent.owner };
        let m = lf_core::agent_model(resolver.as_ref(), &owner, chat.model.as_deref())
            .await
            .map_err(|e| resolve_failure(&e))?;
        let stand_in = chat.stand_in.take();
        let request = ChatRequest { stand_in, ..m.request(chat.system, chat.user) };
        Ok((m.provider, request))
    }

    /// Runs the loop from `state` to its end, a cap or a held call.
    async fn finish(
        &self,
        at: &Attempt<'_>,
        model: &dyn ModelProvider,
        chat: &ChatRequest,
        caps: Caps,
        state: LoopState,
        resume: Resume,
    ) -> Result<Done, Failure> {
        let ran = run_loop_with(model, chat, &at.tools, caps, state, resume, at).await;
        let (end, state) = match ran {
            Ok(r) => r,
            Err(_) if at.lost.load(std::sync::atomic::Ordering::SeqCst) => return Err(lost()),
            Err(e) => {
                at.flush().await;
                return Err(model_failure(e));
            }
        };
        match end {
            LoopEnd::Waiting(call) => at.hold(state, call).await,
            end => {
                at.flush().await;
                let usage = at.charge(&state);
                Ok(Done::with_usage(answer(&state, &end), usage))
            }
        }
    }
}
