//! The tool-calling loop of an agent step: the model is offered the tools
//! of a [`ToolBox`] (for an agent, the catalog tools it was granted) and
//! asked again with each call's result, until it answers without calling a
//! tool or a cap stops it.
//!
//! - Each call the model asks for is checked by the toolbox before it runs,
//!   and run only after its check, one call at a time, in the model's order.
//!   A refused call is not run: the refusal is its result, which the model
//!   reads on its next turn.
//! - A call that needs approval stops the loop in [`LoopEnd::Waiting`],
//!   holding that exact call and the state, both as JSON
//!   ([`LoopState::to_json`]) for the step to keep durably. Resumed with the
//!   approval ([`Resume::Approved`]), the held call runs once, then the
//!   calls of the same answer after it, and the model is asked again with
//!   their results; rejected ([`Resume::Rejected`]), the rejection is its
//!   result. The model is not asked again for it.
//! - Caps: turns (model calls, default 10), tool calls, tokens (what the
//!   server reports, else an estimate of a quarter of the characters) and
//!   wall-clock time. Reaching one ends the loop with [`LoopEnd::Stopped`]
//!   (`max_turns`, `budget` or `time`) and the last answer, not an error.
//! - Every call is told to the toolbox's [`ToolBox::record`] with its
//!   outcome (for the team run's `tool_called` events).
//! - Durable ([`run_loop_with`]): the state is given to a [`Saver`] after
//!   each answer of the model, before each call runs (the call marked
//!   [`LoopState::running`]) and after its result, so a loop resumed from
//!   the last save neither asks the model again for what it answered nor
//!   runs a call twice. A call that was running when the process stopped
//!   is not run again: its result tells the model its outcome is unknown
//!   (at most once, never twice). Resumed, the loop first finishes the
//!   calls of the model's last answer that have no result yet (those after
//!   a held one), then asks the model.
//!
//! A provider that calls no tool (the offline provider) answers on the
//! first turn, under its own name.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use lf_core::{ChatRequest, LfResult, ModelProvider, ToolCall, ToolChatRequest, ToolSpec, Turn};
use serde_json::{Value, json};

/// What a toolbox says of a call before it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// It may run now.
    Allowed,
    /// It may not run: why, for the model (the tool is not granted, a cap).
    Refused(String),
    /// It runs only once a person approves it.
    NeedsApproval,
}

/// What one call came to, as [`ToolBox::record`] hears it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It ran and answered.
    Ran,
    /// It ran and failed (its error is its result).
    Failed(String),
    /// It was refused before it ran.
    Refused(String),
    /// It waits for approval.
    Held,
    /// A person rejected it.
    Rejected(String),
}

/// The tools a loop may call, and who decides.
#[async_trait]
pub trait ToolBox: Send + Sync {
    /// The tools the model is offered.
    fn tools(&self) -> Vec<ToolSpec>;
    /// Whether `call` may run now.
    async fn check(&self, call: &ToolCall) -> Check;
    /// Runs `call` (checked): its result as text, or its error's message.
    async fn call(&self, call: &ToolCall) -> Result<String, String>;
    /// Hears what came of `call`.
    fn record(&self, call: &ToolCall, outcome: &Outcome);
}

/// The loop's hard limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Model calls (default 10).
    pub max_turns: u32,
    /// Tool calls, refused ones included (default 20).
    pub max_tool_calls: u32,
    /// Tokens over all turns (default 100,000).
    pub max_tokens: u64,
    /// Wall-clock time of one stretch of the loop (default 5 minutes).
    pub max_time: Duration,
}

impl Default for Caps {
    fn default() -> Self {
        Caps { max_turns: 10, max_tool_calls: 20, max_tokens: 100_000, max_time: Duration::from_secs(300) }
    }
}

/// Where a loop keeps its state as it goes ([`run_loop_with`]).
#[async_trait]
pub trait Saver: Send + Sync {
    /// Keeps `state` durably; an error stops the loop (nothing more runs).
    async fn save(&self, state: &LoopState) -> LfResult<()>;
}

/// A [`Saver`] that keeps nothing (what [`run_loop`] uses).
pub struct NoSaver;

#[async_trait]
impl Saver for NoSaver {
    async fn save(&self, _: &LoopState) -> LfResult<()> {
        Ok(())
    }
}

/// Where a loop is: the turns after the first message and what it spent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopState {
    pub turns: Vec<Turn>,
    /// Model calls made.
    pub model_calls: u32,
    /// Tool calls asked for (run, refused, held).
    pub tool_calls: u32,
    pub tokens: u64,
    /// The model's last text, if any.
    pub last_answer: String,
    /// The model that answered last.
    pub model: String,
    /// The call running when the state was saved (it has no result yet):
    /// found on resuming, it ran or not, nobody knows.
    pub running: Option<ToolCall>,
}

/// Why a loop was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    MaxTurns,
    Budget,
    Time,
}

impl Stop {
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::MaxTurns => "max_turns",
            Stop::Budget => "budget",
            Stop::Time => "time",
        }
    }
}

/// How a loop ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoopEnd {
    /// The model answered without calling a tool.
    Answered,
    /// A cap stopped it.
    Stopped(Stop),
    /// `call` waits for approval; resume with [`Resume`].
    Waiting(ToolCall),
}

/// How a loop goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resume {
    /// From its state (a new loop: an empty state).
    Continue,
    /// The held call was approved: run it once (then the calls of the same
    /// answer after it), then ask the model.
    Approved(ToolCall),
    /// The held call was rejected, for this reason.
    Rejected(ToolCall, String),
}

/// Runs the loop from `state` until it ends; returns how, and the state.
pub async fn run_loop(
    provider: &dyn ModelProvider,
    chat: &ChatRequest,
    tools: &dyn ToolBox,
    caps: Caps,
    state: LoopState,
    resume: Resume,
) -> LfResult<(LoopEnd, LoopState)> {
    run_loop_with(provider, chat, tools, caps, state, resume, &NoSaver).await
}

/// What the model reads of a call that was running when the process
/// stopped.
pub const UNKNOWN_OUTCOME: &str = "the server stopped while this call ran, so whether it took effect is unknown; check before calling it again";

/// [`run_loop`], giving the state to `saver` as it goes (see the module
/// docs): a loop resumed from its last save runs no call twice.
pub async fn run_loop_with(
    provider: &dyn ModelProvider,
    chat: &ChatRequest,
    tools: &dyn ToolBox,
    caps: Caps,
    mut state: LoopState,
    resume: Resume,
    saver: &dyn Saver,
) -> LfResult<(LoopEnd, LoopState)> {
    let started = Instant::now();
    let offered = tools.tools();
    if let Some(call) = state.running.take() {
        tools.record(&call, &Outcome::Failed(UNKNOWN_OUTCOME.to_owned()));
        state.turns.push(Turn::ToolResult {
            call_id: call.id,
            content: json!({"error": UNKNOWN_OUTCOME}).to_string(),
        });
    }
    match resume {
        Resume::Continue => {}
        Resume::Approved(call) => run_saved(tools, &call, &mut state, saver).await?,
        Resume::Rejected(call, why) => {
            let content = refusal(&format!("a person rejected this call: {why}"));
            tools.record(&call, &Outcome::Rejected(why));
            state.turns.push(Turn::ToolResult { call_id: call.id, content });
            saver.save(&state).await?;
        }
    }
    if let Some(end) = run_pending(tools, caps, &mut state, saver).await? {
        return Ok((end, state));
    }
    loop {
        if state.model_calls >= caps.max_turns {
            return Ok((LoopEnd::Stopped(Stop::MaxTurns), state));
        }
        if state.tokens >= caps.max_tokens {
            return Ok((LoopEnd::Stopped(Stop::Budget), state));
        }
        let Some(left) = caps.max_time.checked_sub(started.elapsed()) else {
            return Ok((LoopEnd::Stopped(Stop::Time), state));
        };
        let request =
            ToolChatRequest { chat: chat.clone(), tools: offered.clone(), turns: state.turns.clone() };
        let answer = match tokio::time::timeout(left, provider.chat_with_tools(request)).await {
            Ok(answer) => answer?,
            Err(_) => return Ok((LoopEnd::Stopped(Stop::Time), state)),
        };
        state.model_calls += 1;
        state.tokens += answer.tokens.unwrap_or_else(|| estimate(chat, &state.turns, &answer.text));
        state.model = answer.model.clone();
        if !answer.text.is_empty() {
            state.last_answer = answer.text.clone();
        }
        if answer.calls.is_empty() {
            return Ok((LoopEnd::Answered, state));
        }
        let text = (!answer.text.is_empty()).then(|| answer.text.clone());
        state.turns.push(Turn::Assistant { text, calls: answer.calls });
        saver.save(&state).await?;
        if let Some(end) = run_pending(tools, caps, &mut state, saver).await? {
            return Ok((end, state));
        }
    }
}

/// The calls of the model's last answer that have no result yet, in its
/// order.
fn pending(turns: &[Turn]) -> Vec<ToolCall> {
    let Some(at) = turns.iter().rposition(|t| matches!(t, Turn::Assistant { .. })) else {
        return Vec::new();
    };
    let Turn::Assistant { calls, .. } = &turns[at] else { return Vec::new() };
    let answered: Vec<&str> = turns[at + 1..]
        .iter()
        .filter_map(|t| match t {
            Turn::ToolResult { call_id, .. } => Some(call_id.as_str()),
            Turn::Assistant { .. } => None,
        })
        .collect();
    calls.iter().filter(|c| !answered.contains(&c.id.as_str())).cloned().collect()
}

/// Checks and runs the pending calls, one at a time: how the loop ends
/// if one is held or the tool-call cap is reached.
async fn run_pending(
    tools: &dyn ToolBox,
    caps: Caps,
    state: &mut LoopState,
    saver: &dyn Saver,
) -> LfResult<Option<LoopEnd>> {
    for call in pending(&state.turns) {
        if state.tool_calls >= caps.max_tool_calls {
            // The calls past the cap get no result: the loop ends here.
            return Ok(Some(LoopEnd::Stopped(Stop::Budget)));
        }
        state.tool_calls += 1;
        match tools.check(&call).await {
            Check::Allowed => run_saved(tools, &call, state, saver).await?,
            Check::Refused(why) => {
                tools.record(&call, &Outcome::Refused(why.clone()));
                state.turns.push(Turn::ToolResult { call_id: call.id, content: refusal(&why) });
            }
            Check::NeedsApproval => {
                tools.record(&call, &Outcome::Held);
                return Ok(Some(LoopEnd::Waiting(call)));
            }
        }
    }
    Ok(None)
}

/// Runs a checked call between two saves: marked running before, its
/// result after.
async fn run_saved(
    tools: &dyn ToolBox,
    call: &ToolCall,
    state: &mut LoopState,
    saver: &dyn Saver,
) -> LfResult<()> {
    state.running = Some(call.clone());
    saver.save(state).await?;
    let content = run_checked(tools, call).await;
    state.running = None;
    state.turns.push(Turn::ToolResult { call_id: call.id.clone(), content });
    saver.save(state).await
}

/// Runs a call that passed its check, and tells what came of it.
async fn run_checked(tools: &dyn ToolBox, call: &ToolCall) -> String {
    match tools.call(call).await {
        Ok(content) => {
            tools.record(call, &Outcome::Ran);
            content
        }
        Err(e) => {
            tools.record(call, &Outcome::Failed(e.clone()));
            json!({"error": e}).to_string()
        }
    }
}

fn refusal(why: &str) -> String {
    json!({"error": "refused", "message": why}).to_string()
}

/// A quarter of the characters of a turn, when the server reports no usage.
fn estimate(chat: &ChatRequest, turns: &[Turn], answer: &str) -> u64 {
    let turn_chars: usize = turns
        .iter()
        .map(|t| match t {
            Turn::Assistant { text, calls } => {
                text.as_ref().map_or(0, String::len) + calls.iter().map(|c| c.arguments.len()).sum::<usize>()
            }
            Turn::ToolResult { content, .. } => content.len(),
        })
        .sum();
    ((chat.system.len() + chat.user.len() + turn_chars + answer.len()) as u64).div_ceil(4)
}

impl LoopState {
    /// The state as JSON, for a step to keep while it waits.
    pub fn to_json(&self) -> Value {
        json!({
            "turns": self.turns.iter().map(turn_json).collect::<Vec<_>>(),
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "tokens": self.tokens,
            "last_answer": self.last_answer,
            "model": self.model,
            "running": self.running.as_ref().map(call_json),
        })
    }

    /// The state [`LoopState::to_json`] wrote; `None` for anything else.
    pub fn from_json(v: &Value) -> Option<LoopState> {
        Some(LoopState {
            turns: v.get("turns")?.as_array()?.iter().map(turn_from_json).collect::<Option<_>>()?,
            model_calls: u32::try_from(v.get("model_calls")?.as_u64()?).ok()?,
            tool_calls: u32::try_from(v.get("tool_calls")?.as_u64()?).ok()?,
            tokens: v.get("tokens")?.as_u64()?,
            last_answer: v.get("last_answer")?.as_str()?.to_owned(),
            model: v.get("model")?.as_str()?.to_owned(),
            running: match v.get("running") {
                None | Some(Value::Null) => None,
                Some(c) => Some(call_from_json(c)?),
            },
        })
    }
}

/// A call as JSON (what a waiting step holds).
pub fn call_json(c: &ToolCall) -> Value {
    json!({"id": c.id, "name": c.name, "arguments": c.arguments})
}

/// The call [`call_json`] wrote.
pub fn call_from_json(v: &Value) -> Option<ToolCall> {
    Some(ToolCall {
        id: v.get("id")?.as_str()?.to_owned(),
        name: v.get("name")?.as_str()?.to_owned(),
        arguments: v.get("arguments")?.as_str()?.to_owned(),
    })
}

fn turn_json(t: &Turn) -> Value {
    match t {
        Turn::Assistant { text, calls } => {
            json!({"assistant": {"text": text, "calls": calls.iter().map(call_json).collect::<Vec<_>>()}})
        }
        Turn::ToolResult { call_id, content } => {
            json!({"tool_result": {"call_id": call_id, "content": content}})
        }
    }
}

fn turn_from_json(v: &Value) -> Option<Turn> {
    if let Some(a) = v.get("assistant") {
        let text = match a.get("text")? {
            Value::Null => None,
            t => Some(t.as_str()?.to_owned()),
        };
        let calls = a.get("calls")?.as_array()?.iter().map(call_from_json).collect::<Option<_>>()?;
        return Some(Turn::Assistant { text, calls });
    }
    let r = v.get("tool_result")?;
    Some(Turn::ToolResult {
        call_id: r.get("call_id")?.as_str()?.to_owned(),
        content: r.get("content")?.as_str()?.to_owned(),
    })
}
