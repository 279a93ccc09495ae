//! The process's metrics: lf-core's [`Meter`] port counted in a Prometheus
//! registry, with the counts only the HTTP transport sees (requests, open
//! connections, refusals), rendered in the Prometheus text format.
//!
//! There is one [`Metrics`] per process ([`metrics`]), like a logger: the
//! binaries call [`install`] at start, which makes it lf-core's meter, and
//! serve or write [`Metrics::render`]. It knows no HTTP, SQL or MCP.
//!
//! Its invariant: every label value comes from a bounded set fixed by the
//! code or the configuration (tool names, error codes, routes, status
//! codes, refusal reasons, the configured model endpoint and name); no
//! token, user, id or free text is ever a label.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use lf_core::meter::{Meter, ModelCall, Outcome, RunEnd};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

pub use prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    tool: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolName {
    tool: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunEndLabels {
    end: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    endpoint: String,
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelOutcome {
    endpoint: String,
    model: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    route: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Route {
    route: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Reason {
    reason: &'static str,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Call latencies: 100 µs to about 26 s, doubling.
fn latency() -> Histogram {
    Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(0.0001, 2.0, 19))
}

/// Waits of runs for a claim: 1 ms to about 9 minutes, doubling.
fn wait() -> Histogram {
    Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(0.001, 2.0, 20))
}

/// The process's metrics. Get it with [`metrics`].
pub struct Metrics {
    registry: Registry,
    tool_calls: Family<ToolLabels, Counter>,
    tool_seconds: Histograms<ToolName>,
    agent_calls: Family<ToolLabels, Counter>,
    runs_started: Counter,
    runs_ended: Family<RunEndLabels, Counter>,
    claim_wait: Histogram,
    runs_active: Gauge,
    run_slots: Gauge,
    due_for: Gauge<f64, AtomicU64>,
    model_calls: Family<ModelOutcome, Counter>,
    model_tokens: Family<ModelLabels, Counter>,
    model_seconds: Histograms<ModelLabels>,
    http_requests: Family<HttpLabels, Counter>,
    http_seconds: Histograms<Route>,
    connections: Gauge,
    refusals: Family<Reason, Counter>,
}

impl Metrics {
    fn new() -> Self {
        let mut metrics = Metrics {
            registry: Registry::with_prefix("lenserfight"),
            tool_calls: Family::default(),
            tool_seconds: Family::new_with_constructor(latency),
            agent_calls: Family::default(),
            runs_started: Counter::default(),
            runs_ended: Family::default(),
            claim_wait: wait(),
            runs_active: Gauge::default(),
            run_slots: Gauge::default(),
            due_for: Gauge::default(),
            model_calls: Family::default(),
            model_tokens: Family::default(),
            model_seconds: Family::new_with_constructor(latency),
            http_requests: Family::default(),
            http_seconds: Family::new_with_constructor(latency),
            connections: Gauge::default(),
            refusals: Family::default(),
        };
        let r = &mut metrics.registry;
        r.register(
            "tool_calls",
            "Tool calls by tool and outcome (ok or the error code)",
            metrics.tool_calls.clone(),
        );
        r.register("tool_call_seconds", "Seconds a tool call took, by tool", metrics.tool_seconds.clone());
        r.register(
            "agent_calls",
            "Calls as an AI Lenser by tool: ok when its checks passed, else the refusal's code",
            metrics.agent_calls.clone(),
        );
        r.register(
            "workflow_runs_started",
            "Workflow runs claimed for the first time",
            metrics.runs_started.clone(),
        );
        r.register(
            "workflow_runs_ended",
            "Workflow runs this process ended, by end (completed, failed, cancelled)",
            metrics.runs_ended.clone(),
        );
        r.register(
            "workflow_run_claim_wait_seconds",
            "Seconds from a workflow run's creation to its first claim",
            metrics.claim_wait.clone(),
        );
        r.register(
            "runner_active_runs",
            "Workflow runs this process drives now",
            metrics.runs_active.clone(),
        );
        r.register("runner_slots", "Workflow runs this process may drive at once", metrics.run_slots.clone());
        r.register(
            "runner_due_seconds",
            "How long the oldest due workflow run has waited for a claim (0: none is due)",
            metrics.due_for.clone(),
        );
        r.register(
            "model_calls",
            "Model calls by endpoint, model and outcome (ok or the error code)",
            metrics.model_calls.clone(),
        );
        r.register(
            "model_tokens",
            "Tokens model calls took, as the model said",
            metrics.model_tokens.clone(),
        );
        r.register("model_call_seconds", "Seconds a model call took", metrics.model_seconds.clone());
        r.register(
            "http_requests",
            "HTTP requests answered, by route and status",
            metrics.http_requests.clone(),
        );
        r.register(
            "http_request_seconds",
            "Seconds an HTTP request took to answer, by route",
            metrics.http_seconds.clone(),
        );
        r.register("http_open_connections", "HTTP connections open now", metrics.connections.clone());
        r.register(
            "http_refusals",
            "HTTP connections closed and requests refused by a limit, by reason",
            metrics.refusals.clone(),
        );
        metrics
    }

    /// Everything counted so far, in the Prometheus text format
    /// ([`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(16 * 1024);
        prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry)
            .expect("writing to a String does not fail");
        out
    }

    /// An HTTP request on `route` (a fixed name, never the request's path)
    /// was answered `status` after `took`.
    pub fn http_request(&self, route: &'static str, status: u16, took: Duration) {
        if !enabled() {
            return;
        }
        self.http_requests.get_or_create(&HttpLabels { route, status }).inc();
        self.http_seconds.get_or_create(&Route { route }).observe(took.as_secs_f64());
    }

    /// A connection opened (`+1`) or closed (`-1`).
    pub fn connections(&self, change: i64) {
        if !enabled() {
            return;
        }
        self.connections.inc_by(change);
    }

    /// A limit closed a connection or refused a request, for `reason` (a
    /// fixed word).
    pub fn refused(&self, reason: &'static str) {
        if !enabled() {
            return;
        }
        self.refusals.get_or_create(&Reason { reason }).inc();
    }
}

impl Meter for Metrics {
    fn tool_call(&self, tool: &'static str, outcome: Outcome, took: Duration) {
        self.tool_calls.get_or_create(&ToolLabels { tool, outcome }).inc();
        self.tool_seconds.get_or_create(&ToolName { tool }).observe(took.as_secs_f64());
    }

    fn agent_call(&self, tool: &'static str, outcome: Outcome) {
        self.agent_calls.get_or_create(&ToolLabels { tool, outcome }).inc();
    }

    fn run_started(&self, waited: Duration) {
        self.runs_started.inc();
        self.claim_wait.observe(waited.as_secs_f64());
    }

    fn run_ended(&self, end: RunEnd) {
        let end = match end {
            RunEnd::Completed => "completed",
            RunEnd::Failed => "failed",
            RunEnd::Cancelled => "cancelled",
        };
        self.runs_ended.get_or_create(&RunEndLabels { end }).inc();
    }

    fn runner(&self, active: usize, slots: usize, due_for: Duration) {
        self.runs_active.set(i64::try_from(active).unwrap_or(i64::MAX));
        self.run_slots.set(i64::try_from(slots).unwrap_or(i64::MAX));
        self.due_for.set(due_for.as_secs_f64());
    }

    fn model_call(&self, call: &ModelCall<'_>) {
        let labels = ModelLabels { endpoint: call.endpoint.to_owned(), model: call.model.to_owned() };
        self.model_calls
            .get_or_create(&ModelOutcome {
                endpoint: labels.endpoint.clone(),
                model: labels.model.clone(),
                outcome: call.outcome,
            })
            .inc();
        if let Some(tokens) = call.tokens {
            self.model_tokens.get_or_create(&labels).inc_by(tokens);
        }
        self.model_seconds.get_or_create(&labels).observe(call.took.as_secs_f64());
    }
}

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

/// Set by [`turn_off`]; read on each of the transport's counts.
static OFF: AtomicBool = AtomicBool::new(false);

/// Counts nothing for the rest of the process (`LENSERFIGHT_NO_METRICS`):
/// [`install`] then leaves lf-core's meter the one that does nothing, the
/// transport's counts are skipped, and [`enabled`] says so, so that
/// `/metrics` is not served. Called before [`install`].
pub fn turn_off() {
    OFF.store(true, Ordering::Relaxed);
}

/// Whether the process counts (it does unless [`turn_off`] was called).
pub fn enabled() -> bool {
    !OFF.load(Ordering::Relaxed)
}

/// The process's metrics.
pub fn metrics() -> &'static Metrics {
    &METRICS
}

/// Makes [`metrics`] lf-core's meter, so that the catalog, the runner and
/// the model client count there. Called by the binaries at start; a second
/// call changes nothing, nor does a call after [`turn_off`].
pub fn install() {
    if enabled() {
        lf_core::meter::install(metrics());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_what_was_counted_with_bounded_labels() {
        let m = Metrics::new();
        m.tool_call("get_lens", "ok", Duration::from_millis(2));
        m.tool_call("get_lens", "NOT_FOUND", Duration::from_millis(1));
        m.tool_call("get_lens", "ok", Duration::from_millis(3));
        m.http_request("/mcp", 200, Duration::from_millis(1));
        m.refused("connection_cap");
        m.model_call(&ModelCall {
            endpoint: "localhost:11434",
            model: "llama3.2",
            outcome: "ok",
            tokens: Some(42),
            took: Duration::from_millis(5),
        });
        let text = m.render();
        assert!(
            text.contains("lenserfight_tool_calls_total{tool=\"get_lens\",outcome=\"ok\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("lenserfight_tool_calls_total{tool=\"get_lens\",outcome=\"NOT_FOUND\"} 1\n"));
        assert!(text.contains("lenserfight_tool_call_seconds_count{tool=\"get_lens\"} 3\n"));
        assert!(text.contains("lenserfight_http_requests_total{route=\"/mcp\",status=\"200\"} 1\n"));
        assert!(text.contains("lenserfight_http_refusals_total{reason=\"connection_cap\"} 1\n"));
        assert!(text.contains(
            "lenserfight_model_tokens_total{endpoint=\"localhost:11434\",model=\"llama3.2\"} 42\n"
        ));
        assert!(text.contains("# TYPE lenserfight_workflow_runs_started_total counter\n"));
    }
}
