//! The settings both binaries share ([`CommonArgs`]: the database, which
//! tools, logs, the model, the configuration file) and their checked form,
//! [`Config`]. Each binary flattens [`CommonArgs`] into its own arguments.

use std::path::PathBuf;
use std::sync::Arc;

use lf_core::ModelProvider;
use lf_tools::{CatalogOptions, Group};

use crate::file::FromFile;
use crate::sealer::{KeySealer, SecretKey};
use crate::settings::{ConfigError, Setting};

/// The settings both transports share: the database, which tools, logs and
/// the model, and where the configuration file is.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CommonArgs {
    /// Configuration file (TOML), with the settings' keys: each variable's name without LENSERFIGHT_, lowercased [default: $XDG_CONFIG_HOME/lenserfight/config.toml, else ~/.config/lenserfight/config.toml]
    #[arg(long, env = "LENSERFIGHT_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Database URL: sqlite:PATH or postgres://... [default: lenserfight.db in the user's data directory]
    #[arg(long, env = "LENSERFIGHT_DATABASE_URL")]
    pub database_url: Option<String>,

    // Its help names the groups of the catalog's registry.
    #[arg(long, env = "LENSERFIGHT_TOOLSETS", value_delimiter = ',', help = toolsets_help())]
    pub toolsets: Option<Vec<String>>,

    /// List only list_toolsets, enable_toolset and the toolsets enabled so far (--toolsets names those a session starts with)
    #[arg(long, env = "LENSERFIGHT_DYNAMIC_TOOLSETS")]
    pub dynamic_toolsets: bool,

    /// Only list and allow Read tools.
    #[arg(long, env = "LENSERFIGHT_READ_ONLY")]
    pub read_only: bool,

    /// Log filter (tracing syntax), e.g. info or lf_store=debug; logs go to stderr [default: RUST_LOG when set, else info]
    #[arg(long, env = "LENSERFIGHT_LOG")]
    pub log: Option<String>,

    /// Write logs as JSON lines.
    #[arg(long, env = "LENSERFIGHT_LOG_JSON")]
    pub log_json: bool,

    /// The model the AI judge asks (OpenAI-compatible; offline when unset).
    #[command(flatten)]
    pub model: lf_model::ModelArgs,

    /// The key sealing saved connections' secrets: 32 bytes as 64 hex digits or base64, e.g. from `openssl rand -hex 32`; prefer the environment or the configuration file, since a flag shows in the process list [default: the key file secret.key in the user's data directory, created when first needed]
    #[arg(long, env = "LENSERFIGHT_SECRET_KEY", value_name = "KEY", hide_env_values = true)]
    pub secret_key: Option<KeyText>,

    /// What workflow steps may reach besides the public internet: host names (`*.example.com`), addresses and CIDR ranges, comma-separated, e.g. `hooks.internal,10.1.0.0/16`; cloud metadata addresses stay closed [default: public addresses only]
    #[arg(long, env = "LENSERFIGHT_EGRESS_ALLOW", value_name = "HOSTS")]
    pub egress_allow: Option<String>,

    /// The credits a workflow run may spend when run_workflow gives no budget_credits [default: no limit]
    #[arg(long, env = "LENSERFIGHT_RUN_BUDGET_CREDITS", value_name = "CREDITS")]
    pub run_budget_credits: Option<u64>,

    /// What model calls in workflow runs cost: credits per 1,000 tokens of prompt and answer, rounded up per call [default: 1]
    #[arg(long, env = "LENSERFIGHT_CREDITS_PER_1K_TOKENS", value_name = "CREDITS")]
    pub credits_per_1k_tokens: Option<u64>,

    /// Seconds a workflow run may take before it fails [default: 600]
    #[arg(long, env = "LENSERFIGHT_RUN_TIMEOUT", value_name = "SECONDS")]
    pub run_timeout: Option<u64>,

    /// Seconds one attempt of a workflow step may take when its config sets no timeout_ms [default: 60]
    #[arg(long, env = "LENSERFIGHT_STEP_TIMEOUT", value_name = "SECONDS")]
    pub step_timeout: Option<u64>,

    /// Steps of one workflow run that run at once [default: 4]
    #[arg(long, env = "LENSERFIGHT_PARALLEL_STEPS", value_name = "STEPS")]
    pub parallel_steps: Option<u32>,

    /// Seconds a runner's claim on a run lasts without a heartbeat; a run whose server died is taken over after it [default: 30]
    #[arg(long, env = "LENSERFIGHT_RUN_LEASE", value_name = "SECONDS")]
    pub run_lease: Option<u64>,

    /// Workflow runs this process drives at once [default: 16]
    #[arg(long, env = "LENSERFIGHT_RUNS_PER_PROCESS", value_name = "RUNS")]
    pub runs_per_process: Option<u64>,

    /// Of those, the most one lenser's runs take while this process claims more [default: 4]
    #[arg(long, env = "LENSERFIGHT_RUNS_PER_STARTER", value_name = "RUNS")]
    pub runs_per_starter: Option<u64>,

    /// Seconds shutdown waits for running workflow steps before it hands their runs back [default: 10]
    #[arg(long, env = "LENSERFIGHT_RUNNER_GRACE", value_name = "SECONDS")]
    pub runner_grace: Option<u64>,

    /// Active AI Lensers one person may own [default: 5]
    #[arg(long, env = "LENSERFIGHT_AGENTS_PER_OWNER", value_name = "AGENTS")]
    pub agents_per_owner: Option<u64>,

    /// Runs that one run may cause through event triggers, its causal tree in all; followers past it are not started [default: 100]
    #[arg(long, env = "LENSERFIGHT_EVENT_TREE_MAX", value_name = "RUNS")]
    pub event_tree_max: Option<u64>,

    /// Runs that event triggers may start for one lenser in any minute [default: 60]
    #[arg(long, env = "LENSERFIGHT_EVENT_RUNS_PER_MINUTE", value_name = "RUNS")]
    pub event_runs_per_minute: Option<u64>,

    /// Where to send traces: an OpenTelemetry collector's OTLP/HTTP address, e.g. http://127.0.0.1:4318 (spans go to its /v1/traces as protobuf): a span per tool call, workflow run and step, model call and agent action, and a traceparent in a request's _meta continued [default: no traces]
    #[arg(long, env = "LENSERFIGHT_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,

    /// Count nothing and serve no /metrics: no tool call, request, run or model call is counted [default: metrics on]
    #[arg(long, env = "LENSERFIGHT_NO_METRICS")]
    pub no_metrics: bool,

    /// Which of these values came from the configuration file (set by
    /// [`crate::parse`]), so that an error names the key where it was set.
    #[arg(skip)]
    pub from_file: FromFile,
}

/// The log filter when no setting names one.
pub const DEFAULT_LOG: &str = "info";

/// Where the log filter came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LogSource {
    /// `--log`, `LENSERFIGHT_LOG` or the configuration file, in clap's order.
    Setting,
    /// `RUST_LOG`, read when the setting is unset, as Rust programs do.
    RustLog,
    Default,
}

/// The log filter: `--log`, then `LENSERFIGHT_LOG`, then the configuration
/// file (all three are `setting`), then `RUST_LOG`, then [`DEFAULT_LOG`].
/// An empty value counts as unset.
fn log_filter<'a>(setting: Option<&'a str>, rust_log: Option<&'a str>) -> (&'a str, LogSource) {
    let given = |v: Option<&'a str>| v.filter(|v| !v.trim().is_empty());
    match (given(setting), given(rust_log)) {
        (Some(s), _) => (s, LogSource::Setting),
        (None, Some(r)) => (r, LogSource::RustLog),
        (None, None) => (DEFAULT_LOG, LogSource::Default),
    }
}

/// `LENSERFIGHT_SECRET_KEY` as given, checked by [`Config::from_args`];
/// never printed.
#[derive(Clone, Default)]
pub struct KeyText(pub String);

impl std::str::FromStr for KeyText {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(KeyText(s.to_owned()))
    }
}

impl std::fmt::Debug for KeyText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyText([redacted])")
    }
}

/// `--toolsets`'s help, naming the groups of the catalog's registry.
fn toolsets_help() -> String {
    format!(
        "Only these tool groups, comma-separated ({}; default: the groups listed by default, all: every group) [default: default]",
        Group::ids().join(", ")
    )
}

impl CommonArgs {
    /// A bad value of `setting`, named where it was set.
    pub fn bad(&self, setting: Setting, message: impl std::fmt::Display) -> ConfigError {
        self.from_file.bad(setting, message)
    }

    /// Sends logs to stderr, filtered as `--log` says (else as `RUST_LOG`
    /// says, else at info), without rmcp's copy of each JSON-RPC error
    /// ([`lf_tools::is_rmcp_error_echo`]: the catalog logs every error it
    /// answers, at the level its code calls for) and without rmcp's events
    /// below warn, which carry whole answers ([`lf_tools::is_rmcp_detail`]),
    /// whatever the filter. With `--otlp-endpoint`, exports the spans too
    /// (see lf-telemetry): keep what this returns until the process ends,
    /// outside the async runtime; dropping it sends the last spans.
    pub fn init_logs(&self) -> Result<Option<lf_telemetry::Traces>, ConfigError> {
        use tracing_subscriber::Layer;
        use tracing_subscriber::filter::FilterExt;
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        let rust_log = std::env::var("RUST_LOG").ok();
        let filter = match log_filter(self.log.as_deref(), rust_log.as_deref()) {
            (text, LogSource::RustLog) => tracing_subscriber::EnvFilter::try_new(text).map_err(|e| {
                self.bad(Setting::Log, format!("RUST_LOG (read as {} is unset): {e}", Setting::Log.env()))
            })?,
            (text, _) => {
                tracing_subscriber::EnvFilter::try_new(text).map_err(|e| self.bad(Setting::Log, e))?
            }
        };
        if self.no_metrics {
            lf_metrics::turn_off();
        }
        let traces = match self.otlp_endpoint.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(endpoint) => {
                Some(lf_telemetry::Traces::start(endpoint).map_err(|e| self.bad(Setting::OtlpEndpoint, e))?)
            }
            None => None,
        };
        let logged = tracing_subscriber::filter::filter_fn(|meta| {
            !lf_tools::is_rmcp_error_echo(meta)
                && !lf_tools::is_rmcp_detail(meta)
                && !lf_telemetry::is_traced(meta)
        });
        let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false);
        let fmt = match self.log_json {
            true => fmt.json().with_filter(filter.and(logged)).boxed(),
            false => fmt.with_filter(filter.and(logged)).boxed(),
        };
        let exported = traces.as_ref().map(|t| t.layer());
        tracing_subscriber::registry().with(fmt).with(exported).init();
        if traces.is_some() {
            lf_tools::install_trace_continuation(lf_telemetry::continue_trace);
        }
        if let Some(path) = &self.from_file.path {
            tracing::info!(file = %path.display(), "configuration file read");
        }
        Ok(traces)
    }

    /// The database URL, or the default file in the user's data directory.
    pub fn database_url(&self) -> Result<String, ConfigError> {
        match self.database_url.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(url) => Ok(url.to_owned()),
            None => lf_store::default_database_url().map_err(|e| self.bad(Setting::DatabaseUrl, e.message())),
        }
    }

    /// Opens the database these settings name (see [`crate::open_database`]).
    pub async fn open_database(&self) -> Result<lf_store::Database, ConfigError> {
        crate::wiring::connect(&self.database_url()?, &self.from_file).await
    }

    /// The model provider the settings name: the OpenAI-compatible client,
    /// or the deterministic offline provider when no model is configured.
    pub fn model_provider(&self) -> Result<Arc<dyn ModelProvider>, ConfigError> {
        self.model
            .provider()
            .map_err(|e| self.bad(Setting::from_env(e.key()).unwrap_or(Setting::ModelBaseUrl), e.message()))
    }

    /// The operator's model endpoints: `default` (`provider`, the
    /// `LENSERFIGHT_MODEL_*` settings) and the file's `[[models]]` entries,
    /// checked (an API key named by `api_key_env` read now). An error names
    /// the entry and its field, never a key.
    pub fn endpoints(&self, provider: Arc<dyn ModelProvider>) -> Result<lf_model::Endpoints, ConfigError> {
        let file = self.from_file.path.clone().unwrap_or_default();
        let bad = |message: String| ConfigError::File { file: file.clone(), named: false, message };
        let mut named = Vec::new();
        for (i, raw) in self.from_file.models.iter().enumerate() {
            let entry = lf_model::NamedEndpoint::parse(raw, |var| std::env::var(var).ok()).map_err(
                |(field, m)| {
                    let name = raw.name.as_deref().unwrap_or("unnamed");
                    bad(format!("[[models]] entry {} ({name}): {field}: {m}", i + 1))
                },
            )?;
            named.push(entry);
        }
        let model = self.model.model_name.clone().filter(|m| !m.trim().is_empty());
        lf_model::Endpoints::new(provider, model)
            .with(named)
            .map_err(|e| bad(format!("[[models]]: {}", e.message())))
    }

    /// `LENSERFIGHT_SECRET_KEY`, checked; `None` when unset (the key file
    /// is used).
    pub fn secret_key(&self) -> Result<Option<SecretKey>, ConfigError> {
        match self.secret_key.as_ref().map(|k| k.0.trim()).filter(|k| !k.is_empty()) {
            None => Ok(None),
            Some(text) => SecretKey::parse(text).map(Some).map_err(|e| self.bad(Setting::SecretKey, e)),
        }
    }

    /// `LENSERFIGHT_EGRESS_ALLOW`, checked: every entry a host, an address or a range.
    pub fn egress_allow(&self) -> Result<lf_egress::Allow, ConfigError> {
        lf_egress::Allow::parse(self.egress_allow.as_deref().unwrap_or(""))
            .map_err(|e| self.bad(Setting::EgressAllow, e))
    }

    /// How workflow runs are bounded and priced: the run settings, checked.
    pub fn runs(&self) -> Result<RunSettings, ConfigError> {
        let seconds = |v: Option<u64>, default: u64, setting: Setting, most: u64| match v {
            None => Ok(default * 1_000),
            Some(s) if (1..=most).contains(&s) => Ok(s * 1_000),
            Some(s) => Err(self.bad(setting, format!("must be 1 to {most} seconds, got {s}"))),
        };
        let limits = lf_workflow::engine::Limits {
            run_timeout_ms: seconds(self.run_timeout, 600, Setting::RunTimeout, 8 * 86_400)?,
            node_timeout_ms: seconds(self.step_timeout, 60, Setting::StepTimeout, 86_400)?,
            budget_credits: self.run_budget_credits,
            parallel: match self.parallel_steps {
                None => 4,
                Some(n @ 1..=64) => n,
                Some(n) => return Err(self.bad(Setting::ParallelSteps, format!("must be 1 to 64, got {n}"))),
            },
        };
        let lease = seconds(self.run_lease, 30, Setting::RunLease, 3_600)?;
        let runs = match self.runs_per_process {
            None => 16,
            Some(n @ 1..=1_024) => n as usize,
            Some(n) => return Err(self.bad(Setting::RunsPerProcess, format!("must be 1 to 1024, got {n}"))),
        };
        let per_starter = match self.runs_per_starter {
            None => 4,
            Some(n @ 1..=1_024) => n as usize,
            Some(n) => return Err(self.bad(Setting::RunsPerStarter, format!("must be 1 to 1024, got {n}"))),
        };
        let grace = match self.runner_grace {
            None => 10,
            Some(s @ 0..=600) => s,
            Some(s) => {
                return Err(self.bad(Setting::RunnerGrace, format!("must be 0 to 600 seconds, got {s}")));
            }
        };
        let runner = lf_runner::RunnerConfig {
            lease: std::time::Duration::from_millis(lease),
            max_runs: runs,
            per_starter,
            grace: std::time::Duration::from_secs(grace),
            ..lf_runner::RunnerConfig::default()
        };
        let rate = self.credits_per_1k_tokens.unwrap_or(1);
        if rate > 1_000_000 {
            return Err(self.bad(Setting::CreditsPer1kTokens, format!("must be at most 1000000, got {rate}")));
        }
        let per_owner = match self.agents_per_owner {
            None => 5,
            Some(n @ 1..=1_000) => n as u32,
            Some(n) => return Err(self.bad(Setting::AgentsPerOwner, format!("must be 1 to 1000, got {n}"))),
        };
        let bound = |v: Option<u64>, default: u64, setting: Setting| match v {
            None => Ok(default),
            Some(n @ 1..=100_000) => Ok(n),
            Some(n) => Err(self.bad(setting, format!("must be 1 to 100000, got {n}"))),
        };
        let events = lf_workflow::run::EventBounds {
            tree_max: bound(self.event_tree_max, 100, Setting::EventTreeMax)?,
            per_minute: bound(self.event_runs_per_minute, 60, Setting::EventRunsPerMinute)?,
        };
        Ok(RunSettings {
            agents: lf_agent::AgentLimits { per_owner, ..lf_agent::AgentLimits::default() },
            egress_allow: self.egress_allow()?,
            defaults: lf_workflow::run::RunDefaults { limits, events },
            pricing: lf_runner::Pricing { credits_per_1k_tokens: rate },
            runner,
            models: None,
        })
    }

    /// Which tools are on.
    pub fn options(&self) -> Result<CatalogOptions, ConfigError> {
        let toolsets = match &self.toolsets {
            None => None,
            Some(sets) => Some(
                Group::parse_set(sets.iter().map(String::as_str))
                    .map_err(|e| self.bad(Setting::Toolsets, e))?,
            ),
        };
        // The icons' URL is the HTTP server's to set (lf-mcp-http).
        Ok(CatalogOptions {
            toolsets,
            read_only: self.read_only,
            dynamic: self.dynamic_toolsets,
            icon_base: None,
        })
    }
}

/// The settings of workflow runs, checked.
#[derive(Clone, Debug, Default)]
pub struct RunSettings {
    /// What steps may reach besides public addresses (`LENSERFIGHT_EGRESS_ALLOW`).
    pub egress_allow: lf_egress::Allow,
    /// What a run gets when its starter says nothing: budget and timeouts.
    pub defaults: lf_workflow::run::RunDefaults,
    /// What model calls cost.
    pub pricing: lf_runner::Pricing,
    /// How this process's runner claims and lets go of runs.
    pub runner: lf_runner::RunnerConfig,
    /// How many agents a person may own, and their members and grants.
    pub agents: lf_agent::AgentLimits,
    /// The operator's model endpoints (`default` and `[[models]]`); none
    /// set: only `default`, the configured provider.
    pub models: Option<Arc<lf_model::Endpoints>>,
}

/// The shared settings, checked.
#[derive(Clone)]
pub struct Config {
    pub database_url: String,
    pub options: CatalogOptions,
    /// The model provider (offline unless a model is configured).
    pub model: Arc<dyn ModelProvider>,
    /// `LENSERFIGHT_SECRET_KEY`, when set: what [`Config::sealer`] seals
    /// under (else the key file).
    pub secret_key: Option<SecretKey>,
    /// What workflow runs may reach, how long they may take and what
    /// their model calls cost.
    pub runs: RunSettings,
    /// Which settings came from the configuration file.
    pub from_file: FromFile,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("database_url", &lf_store::redact_url(&self.database_url))
            .field("options", &self.options)
            .field("model", &self.model.name())
            .field("secret_key", &self.secret_key.as_ref().map(|_| "[set]"))
            .field("runs", &self.runs)
            .field("from_file", &self.from_file)
            .finish()
    }
}

impl Config {
    /// Checks the shared settings; an error names the key. (The order of
    /// the checks is the order in which errors are reported.)
    pub fn from_args(args: &CommonArgs) -> Result<Self, ConfigError> {
        let options = args.options()?;
        let database_url = args.database_url()?;
        let model = args.model_provider()?;
        let secret_key = args.secret_key()?;
        let mut runs = args.runs()?;
        runs.models = Some(Arc::new(args.endpoints(model.clone())?));
        Ok(Self { database_url, options, model, secret_key, runs, from_file: args.from_file.clone() })
    }

    /// The sealer of saved connections' secrets: under
    /// `LENSERFIGHT_SECRET_KEY`, else under the key file in the data
    /// directory, read or created the first time a secret is sealed or
    /// opened (see [`crate::sealer`]).
    pub fn sealer(&self) -> KeySealer {
        KeySealer::new(self.secret_key.clone())
    }

    /// A bad value of `setting`, named where it was set.
    pub fn bad(&self, setting: Setting, message: impl std::fmt::Display) -> ConfigError {
        self.from_file.bad(setting, message)
    }

    /// The database URL with any password masked, for logs.
    pub fn redacted_database_url(&self) -> String {
        lf_store::redact_url(&self.database_url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_settings_default_and_bad_values_name_their_key() {
        let runs = CommonArgs::default().runs().unwrap();
        let l = runs.defaults.limits;
        assert_eq!(
            (l.run_timeout_ms, l.node_timeout_ms, l.budget_credits, l.parallel),
            (600_000, 60_000, None, 4)
        );
        assert_eq!(runs.pricing.credits_per_1k_tokens, 1);

        let set = CommonArgs {
            run_timeout: Some(30),
            step_timeout: Some(5),
            run_budget_credits: Some(250),
            credits_per_1k_tokens: Some(3),
            ..CommonArgs::default()
        };
        let runs = set.runs().unwrap();
        let l = runs.defaults.limits;
        assert_eq!((l.run_timeout_ms, l.node_timeout_ms, l.budget_credits), (30_000, 5_000, Some(250)));
        assert_eq!(runs.pricing.credits_per_1k_tokens, 3);
        assert_eq!((l.parallel, runs.runner.max_runs, runs.runner.per_starter), (4, 16, 4), "the defaults");
        assert_eq!((runs.runner.lease.as_secs(), runs.runner.grace.as_secs()), (30, 10));
        assert_eq!(runs.agents.per_owner, 5, "the original's limit");
        assert_eq!(runs.defaults.events, lf_workflow::run::EventBounds { tree_max: 100, per_minute: 60 });

        let set = CommonArgs {
            parallel_steps: Some(2),
            run_lease: Some(5),
            runs_per_process: Some(64),
            runs_per_starter: Some(9),
            runner_grace: Some(0),
            agents_per_owner: Some(12),
            event_tree_max: Some(7),
            event_runs_per_minute: Some(3),
            ..CommonArgs::default()
        };
        let runs = set.runs().unwrap();
        assert_eq!(runs.agents.per_owner, 12);
        assert_eq!(runs.defaults.events, lf_workflow::run::EventBounds { tree_max: 7, per_minute: 3 });
        assert_eq!(
            (runs.defaults.limits.parallel, runs.runner.max_runs, runs.runner.per_starter),
            (2, 64, 9)
        );
        assert_eq!((runs.runner.lease.as_secs(), runs.runner.grace.as_secs()), (5, 0));

        for (args, key) in [
            (CommonArgs { parallel_steps: Some(0), ..CommonArgs::default() }, "LENSERFIGHT_PARALLEL_STEPS"),
            (CommonArgs { run_lease: Some(3_601), ..CommonArgs::default() }, "LENSERFIGHT_RUN_LEASE"),
            (
                CommonArgs { agents_per_owner: Some(0), ..CommonArgs::default() },
                "LENSERFIGHT_AGENTS_PER_OWNER",
            ),
            (
                CommonArgs { runs_per_process: Some(0), ..CommonArgs::default() },
                "LENSERFIGHT_RUNS_PER_PROCESS",
            ),
            (
                CommonArgs { runs_per_starter: Some(1_025), ..CommonArgs::default() },
                "LENSERFIGHT_RUNS_PER_STARTER",
            ),
            (CommonArgs { runner_grace: Some(601), ..CommonArgs::default() }, "LENSERFIGHT_RUNNER_GRACE"),
            (CommonArgs { event_tree_max: Some(0), ..CommonArgs::default() }, "LENSERFIGHT_EVENT_TREE_MAX"),
            (
                CommonArgs { event_runs_per_minute: Some(100_001), ..CommonArgs::default() },
                "LENSERFIGHT_EVENT_RUNS_PER_MINUTE",
            ),
            (CommonArgs { run_timeout: Some(0), ..CommonArgs::default() }, "LENSERFIGHT_RUN_TIMEOUT"),
            (CommonArgs { step_timeout: Some(86_401), ..CommonArgs::default() }, "LENSERFIGHT_STEP_TIMEOUT"),
            (
                CommonArgs { credits_per_1k_tokens: Some(2_000_000), ..CommonArgs::default() },
                "LENSERFIGHT_CREDITS_PER_1K_TOKENS",
            ),
            (
                CommonArgs { egress_allow: Some("10.0.0.0/33".into()), ..CommonArgs::default() },
                "LENSERFIGHT_EGRESS_ALLOW",
            ),
        ] {
            let e = Config::from_args(&args).unwrap_err().to_string();
            assert!(e.contains(key), "{key} in {e}");
        }
    }

    #[test]
    fn the_log_filter_is_the_setting_then_rust_log_then_info() {
        assert_eq!(log_filter(Some("debug"), Some("trace")), ("debug", LogSource::Setting));
        assert_eq!(log_filter(None, Some("lf_store=debug")), ("lf_store=debug", LogSource::RustLog));
        assert_eq!(log_filter(Some(" "), Some("warn")), ("warn", LogSource::RustLog), "empty is unset");
        assert_eq!(log_filter(None, Some("")), (DEFAULT_LOG, LogSource::Default));
        assert_eq!(log_filter(None, None), (DEFAULT_LOG, LogSource::Default));
    }
}
