//! What the crates that do the work tell as it happens, for whoever counts
//! it: the port of the process's metrics.
//!
//! The catalog, the runner and the model client report each call here; an
//! adapter (lf-metrics) installs the one [`Meter`] of the process with
//! [`install`] before anything is served, as a logger is installed. Until
//! then, and in every embedding that installs none, each report costs a
//! load and goes nowhere.
//!
//! Every label a report carries comes from a bounded set (a tool's name, an
//! [`crate::ErrorCode`]'s string, the configured endpoint and model): never
//! a user, a token or free text.

use std::sync::OnceLock;
use std::time::Duration;

/// How a call ended: `"ok"`, or its error's code ([`crate::ErrorCode::as_str`]).
pub type Outcome = &'static str;

/// The outcome of a call that answered `Ok`.
pub const OK: Outcome = "ok";

/// The outcome of `result`: [`OK`] or its error's code.
pub fn outcome_of<T>(result: &crate::LfResult<T>) -> Outcome {
    match result {
        Ok(_) => OK,
        Err(e) => e.code().as_str(),
    }
}

/// How a workflow run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    Completed,
    Failed,
    Cancelled,
}

/// One call to a model, as the model client saw it.
#[derive(Clone, Copy, Debug)]
pub struct ModelCall<'a> {
    /// The endpoint's host (and port), never its path, query or credentials.
    pub endpoint: &'a str,
    /// The configured model's name, or `"other"` for a model a request
    /// named (a battle's `ai_judge_model_key`: not a bounded set).
    pub model: &'a str,
    pub outcome: Outcome,
    /// The tokens the model said the call took (`usage.total_tokens`).
    pub tokens: Option<u64>,
    pub took: Duration,
}

/// Hears what the process does. Every method has a default that does
/// nothing, and none may block: they run on the paths they report.
pub trait Meter: Send + Sync {
    /// A tool call through the catalog answered with `outcome`.
    fn tool_call(&self, _tool: &'static str, _outcome: Outcome, _took: Duration) {}

    /// An agent's call of `tool` was refused (`outcome`, its code) or
    /// passed its checks and ran ([`OK`], whatever the tool answered).
    fn agent_call(&self, _tool: &'static str, _outcome: Outcome) {}

    /// A workflow run was claimed for the first time, `waited` after it
    /// was made.
    fn run_started(&self, _waited: Duration) {}

    /// A workflow run ended (reported once, by the process that ended it).
    fn run_ended(&self, _end: RunEnd) {}

    /// The runner drives `active` runs of at most `slots`, and the oldest
    /// run it could claim has been due for `due_for` (zero: none is due).
    fn runner(&self, _active: usize, _slots: usize, _due_for: Duration) {}

    /// A call to a model ended.
    fn model_call(&self, _call: &ModelCall<'_>) {}
}

/// A meter that hears nothing.
pub struct NoMeter;

impl Meter for NoMeter {}

static METER: OnceLock<&'static dyn Meter> = OnceLock::new();

/// Installs the process's meter. The first one stays: a second call
/// returns `false` and changes nothing.
pub fn install(meter: &'static dyn Meter) -> bool {
    METER.set(meter).is_ok()
}

/// The process's meter: the installed one, else [`NoMeter`].
pub fn meter() -> &'static dyn Meter {
    match METER.get() {
        Some(m) => *m,
        None => &NoMeter,
    }
}
