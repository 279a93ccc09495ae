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
//!   approval ([`Resume::Approved`]), the held call runs once and the model
//!   is asked again with its result; rejected ([`Resume::Rejected`]), the
//!   rejection is its result. The model is not asked again for it.
//! - Caps: turns (model calls, default 10), tool calls, tokens (what the
//!   server reports, else an estimate of a quarter of the characters) and
//!   wall-clock time. Reaching one ends the loop with [`LoopEnd::Stopped`]
//!   (`max_turns`, `budget` or `time`) and the last answer, not an error.
//! - Every call is told to the toolbox's [`ToolBox::record`] with its
//!   outcome (for the team run's `tool_called` events).
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
    /// The held call was approved: run it once, then ask the model.
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
    mut state: LoopState,
    resume: Resume,
) -> LfResult<(LoopEnd, LoopState)> {
    let started = Instant::now();
    let offered = tools.tools();
    match resume {
        Resume::Continue => {}
        Resume::Approved(call) => {
            let content = run_checked(tools, &call).await;
            state.turns.push(Turn::ToolResult { call_id: call.id, content });
        }
        Resume::Rejected(call, why) => {
            let content = refusal(&format!("a person rejected this call: {why}"));
            tools.record(&call, &Outcome::Rejected(why));
            state.turns.push(Turn::ToolResult { call_id: call.id, content });
        }
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
        state.turns.push(Turn::Assistant { text, calls: answer.calls.clone() });
        for call in answer.calls {
            if state.tool_calls >= caps.max_tool_calls {
                // The calls past the cap get no result: the loop ends here.
                return Ok((LoopEnd::Stopped(Stop::Budget), state));
            }
            state.tool_calls += 1;
            match tools.check(&call).await {
                Check::Allowed => {
                    let content = run_checked(tools, &call).await;
                    state.turns.push(Turn::ToolResult { call_id: call.id, content });
                }
                Check::Refused(why) => {
                    tools.record(&call, &Outcome::Refused(why.clone()));
                    state.turns.push(Turn::ToolResult { call_id: call.id, content: refusal(&why) });
                }
                Check::NeedsApproval => {
                    tools.record(&call, &Outcome::Held);
                    return Ok((LoopEnd::Waiting(call), state));
                }
            }
        }
    }
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
