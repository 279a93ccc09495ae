//! The steps that ask a model: lens steps and `lens_execute` (a lens's
//! template resolved with lf-lens, as the workflow's owner reads it),
//! `prompt_template` (its template, or a lens's as `lens_execute` asks it),
//! `summarizer`, `classifier`, `translator` and
//! `judge_evaluator`. Each asks the [`ModelProvider`] once, with the
//! step's `model` or else the run's `global_model_id` overriding the
//! configured one, and gives a deterministic stand-in answer for the
//! offline provider, which names itself in the output. With a resolver
//! bound ([`crate::OwnServices::bind_resolver`]) the model named is a
//! profile's name or id, an operator endpoint or a bare model name on
//! `default`, as the run's starter may use it: asked on its endpoint with
//! its parameters, those the step's config sets winning.
//!
//! Tokens: the provider reports no counts, so both are estimated as
//! `ceil(chars / 4)` (lf-lens's estimate), and credits are
//! `ceil(tokens × rate / 1000)` by the configured rate.

use std::sync::Arc;

use async_trait::async_trait;
use lf_core::{ChatRequest, ErrorCode, LensId, LfError, ModelProvider, Principal, Scopes, VersionId};
use lf_lens::{LensService, ParamValues, VersionSelector, estimate_tokens};
use lf_workflow::engine::{Failure, Usage, main_input};
use lf_workflow::exec::{fill_placeholders, first_json, text};
use lf_workflow::{JsonObject, Pick};
use serde_json::{Value, json};

use crate::executor::{Done, Executor, Executors, Job};
use crate::steps::Runs;

/// What model calls cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pricing {
    /// Credits per 1,000 tokens (prompt and answer), rounded up per call.
    pub credits_per_1k_tokens: u64,
}

impl Pricing {
    /// What `tokens` cost, rounded up.
    pub fn credits(&self, tokens: u64) -> u64 {
        (tokens * self.credits_per_1k_tokens).div_ceil(1_000)
    }
}

impl Default for Pricing {
    fn default() -> Self {
        Pricing { credits_per_1k_tokens: 1 }
    }
}

/// The model steps' executors.
#[derive(Clone)]
pub struct ModelSteps {
    model: Arc<dyn ModelProvider>,
    lenses: LensService,
    pricing: Pricing,
    own: Option<crate::OwnServices>,
}

impl ModelSteps {
    pub fn new(model: Arc<dyn ModelProvider>, lenses: LensService, pricing: Pricing) -> Self {
        ModelSteps { model, lenses, pricing, own: None }
    }

    /// These steps, naming models through the resolver `own` binds.
    pub fn resolving(self, own: crate::OwnServices) -> Self {
        ModelSteps { own: Some(own), ..self }
    }

    /// `executors` with every model step (a runner with these steps
    /// alone; [`Executors::all`] has every step).
    pub fn register(self, executors: Executors) -> Executors {
        let me: Arc<dyn Executor> = Arc::new(self);
        executors.fill(|runs| (runs == Runs::Model).then(|| me.clone()))
    }

    /// Asks the model with the step's overrides: the answer, what it cost
    /// and how many of its tokens were the prompt's.
    async fn ask(
        &self,
        job: &Job,
        mut request: ChatRequest,
    ) -> Result<(lf_core::ChatResponse, Usage, u64), Failure> {
        let config = &job.node().config;
        request.model =
            config.get("model").and_then(Value::as_str).map(str::to_owned).or(job.global_model_id.clone());
        let resolver = self.own.as_ref().and_then(|o| o.resolver());
        let provider = match (resolver, request.model.clone()) {
            (Some(resolver), Some(named)) => {
                let starter = Principal::Lenser { id: job.started_by, scopes: Scopes::READ };
                let field = if config.get("model").is_some() { "model" } else { "global_model_id" };
                let m = resolver.resolve(&starter, field, &named).await.map_err(|e| resolve_failure(&e))?;
                request = ChatRequest {
                    stand_in: request.stand_in.take(),
                    ..m.request(request.system, request.user)
                };
                m.provider
            }
            _ => self.model.clone(),
        };
        step_parameters(config, &mut request);
        let prompt_tokens = estimate_tokens(&request.system) + estimate_tokens(&request.user);
        let answer = provider.chat(request).await.map_err(model_failure)?;
        let tokens = prompt_tokens + estimate_tokens(&answer.text);
        let credits = self.pricing.credits(tokens);
        Ok((answer, Usage { model_calls: 1, tokens, credits }, prompt_tokens))
    }

    /// The prompt of the lens version `which` names, resolved with the
    /// step's inputs, and that version as the step's output records it.
    async fn lens_prompt(
        &self,
        job: &Job,
        lens: LensId,
        which: VersionSelector,
        label: Option<&str>,
    ) -> Result<(String, Value), Failure> {
        // As the run's starter reads it: run_workflow checked they can.
        let owner = Principal::Lenser { id: job.started_by, scopes: Scopes::READ };
        let view = self.lenses.view(&owner, lens, which).await.map_err(|e| lens_failure(&e))?;
        let mut values = ParamValues::new();
        if let Value::Object(inputs) = &job.input {
            for (k, v) in inputs {
                values = values.insert(k.clone(), text(v).into_owned());
            }
        }
        let ran = json!({
            "lens_id": view.lens.id.to_string(),
            "version_id": view.version.id.to_string(),
            "semver": view.version.semver.to_string(),
            "label": label,
        });
        LensService::resolve(&view.lens, &view.version, &values)
            .map(|(prompt, _)| (prompt, ran))
            .map_err(|e| lens_failure(&e))
    }
}

/// The lens a step's config names (`lens_id`) and the version it pins, if
/// it names one.
fn config_lens(config: &JsonObject) -> Result<Option<(LensId, Option<VersionId>)>, Failure> {
    let text = |k: &str| config.get(k).and_then(Value::as_str);
    let Some(lens) = text("lens_id") else { return Ok(None) };
    let bad = |e: LfError| Failure::new("config_invalid", e.message().to_owned());
    let lens = LensId::parse("lens_id", lens).map_err(bad)?;
    let version = text("version_id").map(|v| VersionId::parse("version_id", v)).transpose().map_err(bad)?;
    Ok(Some((lens, version)))
}

/// The version a lens step runs: the pinned one, the one its `label`
/// config points at now, or the head; and the label named.
fn lens_version(
    version: Option<VersionId>,
    config: &JsonObject,
) -> Result<(VersionSelector, Option<&str>), Failure> {
    let label = config.get("label").and_then(Value::as_str);
    match (version, label) {
        (Some(_), Some(l)) => Err(Failure::new(
            "config_invalid",
            format!("the step pins version_id and follows label {l}: remove one"),
        )),
        (Some(v), None) => Ok((VersionSelector::Id(v), None)),
        (None, Some(l)) => VersionSelector::label("label", l)
            .map(|which| (which, Some(l)))
            .map_err(|e| Failure::new("config_invalid", e.message().to_owned())),
        (None, None) => Ok((VersionSelector::Head, None)),
    }
}

/// The sampling parameters a step's config sets, over the profile's.
fn step_parameters(config: &JsonObject, request: &mut ChatRequest) {
    if let Some(n) = config.get("max_tokens").and_then(Value::as_u64) {
        request.max_tokens = Some(n.min(u32::MAX as u64) as u32);
    }
    if let Some(t) = config.get("temperature").and_then(Value::as_f64) {
        request.temperature = Some(t as f32);
    }
    if let Some(t) = config.get("top_p").and_then(Value::as_f64) {
        request.top_p = Some(t as f32);
    }
    if let Some(s) = config.get("seed").and_then(Value::as_i64) {
        request.seed = Some(s);
    }
    if let Some(Value::Array(stop)) = config.get("stop") {
        request.stop = stop.iter().filter_map(Value::as_str).map(str::to_owned).collect();
    }
}

/// A model name that resolves to nothing the run's starter may use
/// (NOT_FOUND, naming the field), or to an endpoint that cannot be used.
pub(crate) fn resolve_failure(e: &LfError) -> Failure {
    let code = match e.code() {
        ErrorCode::NotFound => "not_found",
        _ => "config_invalid",
    };
    let field = e
        .details()
        .iter()
        .find_map(|(k, v)| match v {
            lf_core::DetailValue::Str(f) if k == "field" => Some(f.as_str()),
            _ => None,
        })
        .unwrap_or("model");
    Failure::new(code, format!("{field}: {}", e.message()))
}

pub(crate) fn model_failure(e: LfError) -> Failure {
    let code = match e.code() {
        ErrorCode::Throttled => "rate_limit",
        ErrorCode::BudgetExceeded => "budget_exceeded",
        _ => "provider_error",
    };
    Failure::new(code, format!("the model provider failed: {}", e.message()))
}

fn lens_failure(e: &LfError) -> Failure {
    let code = match e.code() {
        ErrorCode::NotFound => "not_found",
        _ => "invalid_input",
    };
    Failure::new(code, e.message().to_owned())
}

/// The text a step works on: the part of its main input at `input_path`.
fn text_at(job: &Job) -> Result<String, Failure> {
    let at = job.node().config.get("input_path").and_then(Value::as_str).unwrap_or("output");
    let pick =
        Pick::parse("input_path", at).map_err(|e| Failure::new("config_invalid", e.message().to_owned()))?;
    match pick.pick(main_input(&job.input)) {
        Some(v) => Ok(text(&v).into_owned()),
        None => {
            Err(Failure::new("invalid_input", format!("input_path {at} selects nothing in the step's input")))
        }
    }
}

fn text_output(answer: &lf_core::ChatResponse, usage: Usage, prompt_tokens: u64) -> JsonObject {
    let mut out = JsonObject::new();
    out.insert("text".into(), Value::String(answer.text.clone()));
    out.insert("model".into(), Value::String(answer.model.clone()));
    out.insert("input_tokens".into(), json!(prompt_tokens));
    out.insert("output_tokens".into(), json!(usage.tokens - prompt_tokens));
    out
}

fn words(text: &str, n: usize) -> String {
    text.split_whitespace().take(n).collect::<Vec<_>>().join(" ")
}

#[async_trait]
impl Executor for ModelSteps {
    async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        let node = job.node();
        let config = &node.config;
        let str_of = |k: &str| config.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        // The lens version a lens step ran, for its output.
        let mut ran = None;
        let (request, kind) = match node.node_type.as_str() {
            "lens" | "lens_execute" => {
                let (lens, version) = match node.lens {
                    Some(b) => (b.lens_id, b.version_id),
                    None => config_lens(config)?.ok_or_else(|| {
                        Failure::new("config_invalid", format!("{} needs a lens_id", node.node_type))
                    })?,
                };
                let (which, label) = lens_version(version, config)?;
                let (prompt, version) = self.lens_prompt(job, lens, which, label).await?;
                let mut r = ChatRequest::new("", prompt.clone());
                r.stand_in = Some(format!("Offline answer to: {}", words(&prompt, 40)));
                ran = Some(version);
                (r, "text")
            }
            "prompt_template" => {
                let inputs = &job.input;
                // The lens's prompt, when the step names one, is the template.
                let user = match config_lens(config)? {
                    Some((lens, version)) => {
                        let (which, label) = lens_version(version, config)?;
                        let (prompt, version) = self.lens_prompt(job, lens, which, label).await?;
                        ran = Some(version);
                        prompt
                    }
                    None => fill_placeholders(&str_of("template"), inputs),
                };
                let mut r = ChatRequest::new(fill_placeholders(&str_of("system"), inputs), user.clone());
                r.stand_in = Some(format!("Offline answer to: {}", words(&user, 40)));
                (r, "text")
            }
            "summarizer" => {
                let text = text_at(job)?;
                let max = config.get("max_words").and_then(Value::as_u64).unwrap_or(150) as usize;
                let focus = str_of("instructions");
                let system = format!("Summarize the user's text in at most {max} words. {focus}");
                let mut r = ChatRequest::new(system.trim_end(), text.clone());
                r.stand_in = Some(words(&text, max));
                (r, "text")
            }
            "translator" => {
                let text = text_at(job)?;
                let from = str_of("source_language");
                let from = if from.is_empty() { String::new() } else { format!(" from {from}") };
                let system = format!(
                    "Translate the user's text{from} into {}. Answer with the translation only.",
                    str_of("target_language")
                );
                let mut r = ChatRequest::new(system, text.clone());
                r.stand_in = Some(text);
                (r, "text")
            }
            "classifier" => {
                let text = text_at(job)?;
                let labels = string_list(config.get("labels"));
                let multi = config.get("multi_label") == Some(&Value::Bool(true));
                let how =
                    if multi { "every label that applies, comma-separated" } else { "exactly one label" };
                let system = format!(
                    "Classify the user's text. Labels: {}. Answer with {how}, nothing else.",
                    labels.join(", ")
                );
                let mut r = ChatRequest::new(system, text);
                r.stand_in = labels.first().cloned();
                (r, "classify")
            }
            "judge_evaluator" => {
                let text = text_at(job)?;
                let max = config.get("max_score").and_then(Value::as_f64).unwrap_or(10.0);
                let system = format!(
                    "Score the user's text against this rubric from 0 to {max}: {}\nAnswer with JSON only: {{\"score\": <number>, \"rationale\": \"<why>\"}}.",
                    str_of("rubric")
                );
                let mut r = ChatRequest::new(system, text);
                r.temperature = Some(0.0);
                r.stand_in = Some(
                    json!({"score": max / 2.0, "rationale": "Offline stand-in: no model judged this."})
                        .to_string(),
                );
                (r, "judge")
            }
            other => return Err(Failure::new("not_executable", format!("{other} is not a model step"))),
        };
        let (answer, usage, prompt_tokens) = self.ask(job, request).await?;
        let mut out = text_output(&answer, usage, prompt_tokens);
        if let Some(version) = ran {
            out.insert("version".into(), version);
        }
        match kind {
            "classify" => {
                let labels = string_list(config.get("labels"));
                let chosen: Vec<String> = labels
                    .iter()
                    .filter(|l| answer.text.split([',', '\n']).any(|a| a.trim().eq_ignore_ascii_case(l)))
                    .cloned()
                    .collect();
                let Some(first) = chosen.first().cloned() else {
                    return Err(Failure::new(
                        "provider_error",
                        format!(
                            "the model answered {:?}, which is none of the labels {}",
                            lf_core::clip(&answer.text, 80),
                            labels.join(", ")
                        ),
                    ));
                };
                let chosen = if config.get("multi_label") == Some(&Value::Bool(true)) {
                    chosen
                } else {
                    vec![first.clone()]
                };
                let mut o = JsonObject::new();
                o.insert("label".into(), Value::String(first));
                o.insert("labels".into(), json!(chosen));
                o.extend(out);
                out = o;
            }
            "judge" => {
                let max = config.get("max_score").and_then(Value::as_f64).unwrap_or(10.0);
                let verdict = first_json(&answer.text, &['{'])
                    .and_then(|v| match v {
                        Value::Object(o) => Some(o),
                        _ => None,
                    })
                    .ok_or_else(|| {
                        Failure::new(
                            "provider_error",
                            format!(
                                "the judge's answer holds no JSON object: {:?}",
                                lf_core::clip(&answer.text, 80)
                            ),
                        )
                    })?;
                let score = verdict.get("score").and_then(Value::as_f64).ok_or_else(|| {
                    Failure::new("provider_error", "the judge's answer has no numeric score")
                })?;
                let mut o = JsonObject::new();
                o.insert("score".into(), json!(score.clamp(0.0, max)));
                o.insert(
                    "rationale".into(),
                    verdict.get("rationale").cloned().unwrap_or(Value::String(String::new())),
                );
                o.insert("model".into(), out["model"].clone());
                o.insert("input_tokens".into(), out["input_tokens"].clone());
                o.insert("output_tokens".into(), out["output_tokens"].clone());
                out = o;
            }
            _ => {}
        }
        Ok(Done::with_usage(Value::Object(out), usage))
    }
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
}
