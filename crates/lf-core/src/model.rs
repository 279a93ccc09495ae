//! Model calls. Every call to a language model (the AI judge of battles, AI
//! workflow nodes, agent steps) goes through one [`ModelProvider`], so a
//! deployment chooses its model in one place and tests swap in a fake.
//!
//! The trait is object safe and its `chat` method has exactly the signature
//! the `async-trait` crate generates for
//! `async fn chat(&self, request: ChatRequest) -> LfResult<ChatResponse>`:
//! implement it with `#[async_trait::async_trait]` on the impl block (lf-core
//! itself stays free of the macro crate), or by hand with `Box::pin`:
//!
//! ```
//! use std::future::Future;
//! use std::pin::Pin;
//! use lf_core::{ChatRequest, ChatResponse, LfResult, ModelProvider};
//!
//! struct Shout;
//!
//! impl ModelProvider for Shout {
//!     fn name(&self) -> &str {
//!         "shout"
//!     }
//!     fn chat<'life0, 'async_trait>(
//!         &'life0 self,
//!         request: ChatRequest,
//!     ) -> Pin<Box<dyn Future<Output = LfResult<ChatResponse>> + Send + 'async_trait>>
//!     where
//!         'life0: 'async_trait,
//!         Self: 'async_trait,
//!     {
//!         Box::pin(async move { Ok(ChatResponse::new(request.user.to_uppercase(), "shout")) })
//!     }
//! }
//!
//! // Any executor runs it; this one is ready at once, so a no-op waker will do.
//! let mut call = Shout.chat(ChatRequest::new("Be loud.", "hello"));
//! let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
//! let std::task::Poll::Ready(answer) = call.as_mut().poll(&mut cx) else { unreachable!() };
//! assert_eq!(answer.unwrap().text, "HELLO");
//! ```

use std::future::Future;
use std::pin::Pin;

use crate::error::LfResult;

/// One chat-completions call: a system message and a user message.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatRequest {
    /// The model to ask, overriding the provider's configured model (a
    /// battle's `ai_judge_model_key`). `None`: the provider's default.
    pub model: Option<String>,
    /// Instructions: who the model is and what shape its answer takes.
    pub system: String,
    /// The material to work on.
    pub user: String,
    /// Most tokens the answer may take; `None`: the provider's default.
    pub max_tokens: Option<u32>,
    /// Sampling temperature; `None`: the provider's default. Judges ask for 0.
    pub temperature: Option<f32>,
    /// Nucleus sampling; `None`: the provider's default.
    pub top_p: Option<f32>,
    /// A seed for providers that sample reproducibly; `None`: none sent.
    pub seed: Option<i64>,
    /// Sequences that end the answer (at most 4); empty: none sent.
    pub stop: Vec<String>,
    /// The caller's deterministic stand-in for a model's answer, in the
    /// shape it asks for: what an offline provider answers (under
    /// [`OFFLINE_MODEL_NAME`]) when no model is configured. A model never
    /// sees it. `None`: the caller has none, and an offline provider answers
    /// a placeholder text.
    pub stand_in: Option<String>,
}

impl ChatRequest {
    /// A request with the provider's default model, length and temperature,
    /// and no stand-in answer.
    pub fn new(system: impl Into<String>, user: impl Into<String>) -> Self {
        Self {
            model: None,
            system: system.into(),
            user: user.into(),
            max_tokens: None,
            temperature: None,
            top_p: None,
            seed: None,
            stop: Vec::new(),
            stand_in: None,
        }
    }
}

/// The name under which stand-in answers (see [`ChatRequest::stand_in`])
/// are given and recorded, by an offline provider or by a service that has
/// no model: every result built from one says so, and nobody mistakes it
/// for a model's.
pub const OFFLINE_MODEL_NAME: &str = "offline-deterministic";

/// A model's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatResponse {
    /// The text of the answer (the first choice's message content).
    pub text: String,
    /// The model that answered, as the provider names it. Recorded with every
    /// result built from the answer (an offline provider puts its own name
    /// here, so nobody mistakes its output for a model's).
    pub model: String,
    /// What the call took, as far as the provider knows.
    pub stats: CallStats,
}

impl ChatResponse {
    /// An answer of `text` by `model`, with nothing known of what it took.
    pub fn new(text: impl Into<String>, model: impl Into<String>) -> Self {
        Self { text: text.into(), model: model.into(), stats: CallStats::default() }
    }
}

/// What one model call took: the endpoint's `usage` and `finish_reason`
/// when it gave them, and the times the client measured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallStats {
    /// Prompt tokens (`usage.prompt_tokens`); `None`: not reported.
    pub input_tokens: Option<u64>,
    /// Answer tokens (`usage.completion_tokens`); `None`: not reported.
    pub output_tokens: Option<u64>,
    /// Why the answer ended (`choices[0].finish_reason`: `stop`, `length`...).
    pub finish_reason: Option<String>,
    /// Milliseconds from sending the request that answered to its first
    /// byte (its status line); `None`: not measured.
    pub first_byte_ms: Option<u64>,
    /// Milliseconds the whole call took, retries and waits included;
    /// `None`: not measured.
    pub total_ms: Option<u64>,
}

/// What a model's answer cost, recorded with what it answered (a battle
/// submission, a judge's verdicts, an experiment's cell): which profile and
/// endpoint, the model the endpoint named, times, tokens and price.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerCost {
    /// The model profile asked, when one was named.
    pub profile_id: Option<crate::ModelProfileId>,
    /// The endpoint: an operator's name, or `connection:<ref>`.
    pub endpoint: String,
    /// The model that answered, as the endpoint reported it.
    pub model: String,
    pub first_byte_ms: Option<u64>,
    pub total_ms: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// True when the endpoint reported no usage and the tokens are this
    /// server's estimate.
    pub tokens_estimated: bool,
    /// From the profile's prices per million tokens (0 without prices).
    pub cost_usd: f64,
    pub finish_reason: Option<String>,
}

/// A tool a model may call in a [`ToolChatRequest`] (OpenAI's `tools`, of
/// type `function`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSpec {
    /// Its name, as the model calls it.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments, as JSON text (an object schema).
    pub parameters: String,
}

/// A call a model asked for (one of OpenAI's `tool_calls`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// The model's id of the call, which its result answers.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments as the model wrote them: JSON text, not checked.
    pub arguments: String,
}

/// A turn of a tool-calling conversation after its first user message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Turn {
    /// What the model answered: its text, if any, and the calls it asked for.
    Assistant { text: Option<String>, calls: Vec<ToolCall> },
    /// The result of call `call_id`, as text (JSON or an error's message).
    ToolResult { call_id: String, content: String },
}

/// A chat-completions call that offers tools: the [`ChatRequest`] (its
/// system and first user message), the tools, and the conversation so far.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolChatRequest {
    pub chat: ChatRequest,
    pub tools: Vec<ToolSpec>,
    /// The turns after the first user message, oldest first.
    pub turns: Vec<Turn>,
}

/// A model's answer to a [`ToolChatRequest`]: text, calls to make, or both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolChatResponse {
    /// The text of the answer (empty when the model only asked for calls).
    pub text: String,
    /// The calls it asked for, in its order; none when it answered.
    pub calls: Vec<ToolCall>,
    /// The model that answered, as [`ChatResponse::model`].
    pub model: String,
    /// The tokens the call took, when the server said (`usage.total_tokens`).
    pub tokens: Option<u64>,
}

/// Where model answers come from: an OpenAI-compatible HTTP client, the
/// deterministic offline provider, or a test double.
///
/// Errors: a provider returns an [`crate::LfError`] when it gets no usable
/// answer (INTERNAL for transport or server failures, with the cause kept;
/// THROTTLED when the model server rate-limits; BUDGET_EXCEEDED when a spend
/// limit stops the call). It never panics on a malformed answer: deciding
/// whether a text is usable is the caller's job.
pub trait ModelProvider: Send + Sync {
    /// A short, stable name for logs and results (`"openai-compatible"`,
    /// `"offline-deterministic"`).
    fn name(&self) -> &str;

    /// Sends one chat request and waits for the answer.
    fn chat<'life0, 'async_trait>(
        &'life0 self,
        request: ChatRequest,
    ) -> Pin<Box<dyn Future<Output = LfResult<ChatResponse>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait;

    /// Sends one chat request that offers `request.tools`, with the
    /// conversation so far, and waits for the answer (the same signature as
    /// `async fn chat_with_tools(&self, request: ToolChatRequest) ->
    /// LfResult<ToolChatResponse>` under `async-trait`).
    ///
    /// By default a provider calls no tool: it answers the first message
    /// with [`ModelProvider::chat`] (so an offline provider answers its
    /// stand-in, under its own name), whatever the tools and turns.
    fn chat_with_tools<'life0, 'async_trait>(
        &'life0 self,
        request: ToolChatRequest,
    ) -> Pin<Box<dyn Future<Output = LfResult<ToolChatResponse>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move {
            let answer = self.chat(request.chat).await?;
            Ok(ToolChatResponse { text: answer.text, calls: Vec::new(), model: answer.model, tokens: None })
        })
    }
}

/// What to ask and where: a model a caller named (a model profile's id or
/// name, an operator endpoint, or a bare model name on `default`),
/// resolved by a [`ModelResolver`].
#[derive(Clone)]
pub struct ResolvedModel {
    /// The endpoint's client, within its concurrency limit.
    pub provider: std::sync::Arc<dyn ModelProvider>,
    /// The endpoint's name: an operator's, or `connection:<ref>`.
    pub endpoint: String,
    /// The model to ask; `None`: the endpoint's configured one.
    pub model: Option<String>,
    /// The profile it came from, if any.
    pub profile: Option<crate::ModelProfileId>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub max_tokens: Option<u32>,
    pub seed: Option<i64>,
    pub stop: Vec<String>,
    pub price_per_million_input: f64,
    pub price_per_million_output: f64,
}

impl ResolvedModel {
    /// `model` on `endpoint` as it is: no profile, parameters or prices.
    pub fn on(
        provider: std::sync::Arc<dyn ModelProvider>,
        endpoint: impl Into<String>,
        model: Option<String>,
    ) -> Self {
        Self {
            provider,
            endpoint: endpoint.into(),
            model,
            profile: None,
            temperature: None,
            top_p: None,
            max_tokens: None,
            seed: None,
            stop: Vec::new(),
            price_per_million_input: 0.0,
            price_per_million_output: 0.0,
        }
    }

    /// A request of `system` and `user` to this model with its parameters.
    pub fn request(&self, system: impl Into<String>, user: impl Into<String>) -> ChatRequest {
        ChatRequest {
            model: self.model.clone(),
            max_tokens: self.max_tokens,
            temperature: self.temperature.map(|t| t as f32),
            top_p: self.top_p.map(|t| t as f32),
            seed: self.seed,
            stop: self.stop.clone(),
            ..ChatRequest::new(system, user)
        }
    }

    /// What `answer` to `request` cost on this model: the endpoint's token
    /// counts, or `estimate` of the texts (marked estimated) when it gave
    /// none; the price from the profile's rates; `elapsed_ms` when the
    /// provider measured no total.
    pub fn cost(
        &self,
        request: &ChatRequest,
        answer: &ChatResponse,
        elapsed_ms: u64,
        estimate: impl Fn(&str) -> u64,
    ) -> AnswerCost {
        let s = &answer.stats;
        let (input, output, estimated) = match (s.input_tokens, s.output_tokens) {
            (Some(i), Some(o)) => (i, o, false),
            (i, o) => (
                i.unwrap_or_else(|| estimate(&request.system) + estimate(&request.user)),
                o.unwrap_or_else(|| estimate(&answer.text)),
                true,
            ),
        };
        let cost_usd = (input as f64 * self.price_per_million_input
            + output as f64 * self.price_per_million_output)
            / 1_000_000.0;
        AnswerCost {
            profile_id: self.profile,
            endpoint: self.endpoint.clone(),
            model: answer.model.clone(),
            first_byte_ms: s.first_byte_ms,
            total_ms: s.total_ms.unwrap_or(elapsed_ms),
            input_tokens: input,
            output_tokens: output,
            tokens_estimated: estimated,
            cost_usd,
            finish_reason: s.finish_reason.clone(),
        }
    }
}

impl std::fmt::Debug for ResolvedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedModel")
            .field("provider", &self.provider.name())
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("profile", &self.profile)
            .finish_non_exhaustive()
    }
}

/// Turns what a caller names as a model into what to ask and where: the
/// one resolver every place that names a model asks (the composition root
/// implements it over model profiles, the operator's endpoints and saved
/// connections). The same signature as `async fn resolve(&self, p:
/// &Principal, field: &'static str, named: &str) -> LfResult<ResolvedModel>`
/// written out: NOT_FOUND on `field` for a profile `p` may not use, alike
/// whether it exists.
pub trait ModelResolver: Send + Sync {
    fn resolve<'a>(
        &'a self,
        p: &'a crate::Principal,
        field: &'static str,
        named: &'a str,
    ) -> Pin<Box<dyn Future<Output = LfResult<ResolvedModel>> + Send + 'a>>;
}

/// What an AI Lenser's `model` means, through `resolver` as `p` may use it
/// (field `model`): a profile's name or id, an operator endpoint, or a bare
/// model name on `default`, as everywhere a model is named; none: the
/// endpoint `default` with its own model. The one rule for agents,
/// whether they act in a workflow step or answer a battle.
pub async fn agent_model(
    resolver: &dyn ModelResolver,
    p: &crate::Principal,
    named: Option<&str>,
) -> LfResult<ResolvedModel> {
    const DEFAULT: &str = "default";
    let Some(named) = named else {
        let mut model = resolver.resolve(p, "model", DEFAULT).await?;
        if model.model.as_deref() == Some(DEFAULT) {
            model.model = None; // `default` declares no model of its own: the provider's.
        }
        return Ok(model);
    };
    resolver.resolve(p, "model", named).await
}
