//! Every setting of the two servers, under its three names, and the one
//! error type of configuration.
//!
//! A setting has one name per source. Its row names the file key; the
//! environment variable and the flag are made from it by one rule
//! (`database_url`, `LENSERFIGHT_DATABASE_URL`, `--database-url`). The file
//! key is also the clap argument's id, which is how the configuration file
//! reaches the parsed arguments (see [`crate::file`]). The binaries' clap
//! arguments spell the variable out, so that a search for it finds its
//! argument; [`check_arguments`] holds them to the rows.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The environment variable and flag naming the configuration file itself
/// (not a key of the file).
pub const CONFIG_ENV: &str = "LENSERFIGHT_CONFIG";
/// See [`CONFIG_ENV`].
pub const CONFIG_FLAG: &str = "--config";

/// The type of value a setting takes in the configuration file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A string.
    Text,
    /// `true` or `false`.
    Switch,
    /// A whole number, 0 or more.
    Count,
    /// A list of strings, or one string of comma-separated items.
    List,
}

/// Which binary reads a setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// Both `lf-mcp-stdio` and `lf-mcp-http`.
    Both,
    /// `lf-mcp-stdio` only.
    Stdio,
    /// `lf-mcp-http serve` only.
    Http,
}

/// A setting of `lf-mcp-stdio` or `lf-mcp-http`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Setting {
    DatabaseUrl,
    LenserId,
    Toolsets,
    DynamicToolsets,
    ReadOnly,
    Log,
    LogJson,
    LingerUs,
    ModelBaseUrl,
    ModelApiKey,
    ModelName,
    SecretKey,
    EgressAllow,
    RunBudgetCredits,
    CreditsPer1kTokens,
    RunTimeout,
    StepTimeout,
    ParallelSteps,
    RunLease,
    RunsPerProcess,
    RunsPerStarter,
    RunnerGrace,
    AgentsPerOwner,
    EventTreeMax,
    EventRunsPerMinute,
    OtlpEndpoint,
    MetricsFile,
    NoMetrics,
    Bind,
    PublicUrl,
    AllowedOrigins,
    RequestTimeout,
    HeaderTimeout,
    IdleTimeout,
    MaxConnections,
    MaxConnectionsPerClient,
    BodyGrace,
    MinBodyRate,
    ShutdownTimeout,
    TrustedProxies,
    RegistrationsPerHour,
    HooksPerMinute,
    Sessions,
    DevLenser,
    MetricsBind,
    ClientMetadataHttpLoopback,
    NoPages,
}

/// `(setting, file key, kind, reader)`: the key names the setting in the
/// configuration file; its variable and flag follow from it ([`names_of`]).
const TABLE: [(Setting, &str, Kind, Reader); 47] = [
    (Setting::DatabaseUrl, "database_url", Kind::Text, Reader::Both),
    (Setting::LenserId, "lenser_id", Kind::Text, Reader::Stdio),
    (Setting::Toolsets, "toolsets", Kind::List, Reader::Both),
    (Setting::DynamicToolsets, "dynamic_toolsets", Kind::Switch, Reader::Both),
    (Setting::ReadOnly, "read_only", Kind::Switch, Reader::Both),
    (Setting::Log, "log", Kind::Text, Reader::Both),
    (Setting::LogJson, "log_json", Kind::Switch, Reader::Both),
    (Setting::LingerUs, "linger_us", Kind::Count, Reader::Stdio),
    (Setting::ModelBaseUrl, "model_base_url", Kind::Text, Reader::Both),
    (Setting::ModelApiKey, "model_api_key", Kind::Text, Reader::Both),
    (Setting::ModelName, "model_name", Kind::Text, Reader::Both),
    (Setting::SecretKey, "secret_key", Kind::Text, Reader::Both),
    (Setting::EgressAllow, "egress_allow", Kind::List, Reader::Both),
    (Setting::RunBudgetCredits, "run_budget_credits", Kind::Count, Reader::Both),
    (Setting::CreditsPer1kTokens, "credits_per_1k_tokens", Kind::Count, Reader::Both),
    (Setting::RunTimeout, "run_timeout", Kind::Count, Reader::Both),
    (Setting::StepTimeout, "step_timeout", Kind::Count, Reader::Both),
    (Setting::ParallelSteps, "parallel_steps", Kind::Count, Reader::Both),
    (Setting::RunLease, "run_lease", Kind::Count, Reader::Both),
    (Setting::RunsPerProcess, "runs_per_process", Kind::Count, Reader::Both),
    (Setting::RunsPerStarter, "runs_per_starter", Kind::Count, Reader::Both),
    (Setting::RunnerGrace, "runner_grace", Kind::Count, Reader::Both),
    (Setting::AgentsPerOwner, "agents_per_owner", Kind::Count, Reader::Both),
    (Setting::EventTreeMax, "event_tree_max", Kind::Count, Reader::Both),
    (Setting::EventRunsPerMinute, "event_runs_per_minute", Kind::Count, Reader::Both),
    (Setting::OtlpEndpoint, "otlp_endpoint", Kind::Text, Reader::Both),
    (Setting::MetricsFile, "metrics_file", Kind::Text, Reader::Stdio),
    (Setting::NoMetrics, "no_metrics", Kind::Switch, Reader::Both),
    (Setting::Bind, "bind", Kind::Text, Reader::Http),
    (Setting::PublicUrl, "public_url", Kind::Text, Reader::Http),
    (Setting::AllowedOrigins, "allowed_origins", Kind::List, Reader::Http),
    (Setting::RequestTimeout, "request_timeout", Kind::Count, Reader::Http),
    (Setting::HeaderTimeout, "header_timeout", Kind::Count, Reader::Http),
    (Setting::IdleTimeout, "idle_timeout", Kind::Count, Reader::Http),
    (Setting::MaxConnections, "max_connections", Kind::Count, Reader::Http),
    (Setting::MaxConnectionsPerClient, "max_connections_per_client", Kind::Count, Reader::Http),
    (Setting::BodyGrace, "body_grace", Kind::Count, Reader::Http),
    (Setting::MinBodyRate, "min_body_rate", Kind::Count, Reader::Http),
    (Setting::ShutdownTimeout, "shutdown_timeout", Kind::Count, Reader::Http),
    (Setting::TrustedProxies, "trusted_proxies", Kind::List, Reader::Http),
    (Setting::RegistrationsPerHour, "registrations_per_hour", Kind::Count, Reader::Http),
    (Setting::HooksPerMinute, "hooks_per_minute", Kind::Count, Reader::Http),
    (Setting::Sessions, "sessions", Kind::Switch, Reader::Http),
    (Setting::DevLenser, "dev_lenser", Kind::Text, Reader::Http),
    (Setting::MetricsBind, "metrics_bind", Kind::Text, Reader::Http),
    (Setting::ClientMetadataHttpLoopback, "client_metadata_http_loopback", Kind::Switch, Reader::Http),
    (Setting::NoPages, "no_pages", Kind::Switch, Reader::Http),
];

/// The one rule naming a setting from its file key: the variable is
/// `LENSERFIGHT_` and the key uppercased, the flag `--` and the key with `-`
/// for `_` (`database_url`, `LENSERFIGHT_DATABASE_URL`, `--database-url`).
fn names_of(key: &str) -> (String, String) {
    (format!("LENSERFIGHT_{}", key.to_uppercase()), format!("--{}", key.replace('_', "-")))
}

/// Each row's variable and flag, made once, so that they can be lent out
/// for as long as the program runs, as the keys are.
static NAMES: LazyLock<Vec<(String, String)>> =
    LazyLock::new(|| TABLE.iter().map(|(_, key, ..)| names_of(key)).collect());

impl Setting {
    /// Every setting, in the order of the README's tables.
    pub const ALL: [Setting; TABLE.len()] = {
        let mut all = [Setting::DatabaseUrl; TABLE.len()];
        let mut i = 0;
        while i < TABLE.len() {
            all[i] = TABLE[i].0;
            i += 1;
        }
        all
    };

    fn row(self) -> &'static (Setting, &'static str, Kind, Reader) {
        &TABLE[self as usize]
    }

    fn names(self) -> &'static (String, String) {
        &NAMES[self as usize]
    }

    /// Its key in the configuration file, and its clap argument's id.
    pub fn key(self) -> &'static str {
        self.row().1
    }

    /// Its environment variable.
    pub fn env(self) -> &'static str {
        &self.names().0
    }

    /// Its command-line flag.
    pub fn flag(self) -> &'static str {
        &self.names().1
    }

    /// The type of its value in the configuration file.
    pub fn kind(self) -> Kind {
        self.row().2
    }

    /// Which binary reads it.
    pub fn reader(self) -> Reader {
        self.row().3
    }

    /// The setting with this file key.
    pub fn from_key(key: &str) -> Option<Setting> {
        TABLE.iter().find(|r| r.1 == key).map(|r| r.0)
    }

    /// The setting with this environment variable.
    pub fn from_env(env: &str) -> Option<Setting> {
        Setting::ALL.into_iter().find(|s| s.env() == env)
    }
}

/// Checks that `command`'s arguments (besides `--config`, `--help` and
/// `--version`) are exactly the settings `reader` reads, each under its one
/// flag, variable and id (the configuration file's key): what a binary's
/// test asks of its command line. `Err` says what differs.
pub fn check_arguments(command: &clap::Command, reader: Reader) -> Result<(), String> {
    let args: Vec<&clap::Arg> = command
        .get_arguments()
        .filter(|a| !matches!(a.get_id().as_str(), "config" | "help" | "version"))
        .collect();
    let mut problems = Vec::new();
    for arg in &args {
        let id = arg.get_id().as_str();
        let Some(setting) = Setting::from_key(id) else {
            problems.push(format!("{id} is no setting"));
            continue;
        };
        if setting.reader() != Reader::Both && setting.reader() != reader {
            problems.push(format!("{id} is not read by this binary ({:?})", setting.reader()));
        }
        if arg.get_long().map(|l| format!("--{l}")).as_deref() != Some(setting.flag()) {
            problems.push(format!("{id}'s flag is not {}", setting.flag()));
        }
        if arg.get_env().and_then(|e| e.to_str()) != Some(setting.env()) {
            problems.push(format!("{id}'s variable is not {}", setting.env()));
        }
    }
    for setting in Setting::ALL.iter().filter(|s| s.reader() == Reader::Both || s.reader() == reader) {
        if !args.iter().any(|a| a.get_id().as_str() == setting.key()) {
            problems.push(format!("{} has no argument", setting.key()));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("; ")) }
}

/// `LENSERFIGHT_DATABASE_URL (--database-url)`: how configuration errors
/// name a setting given by a flag or the environment.
impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.env(), self.flag())
    }
}

/// A configuration mistake, stopping start-up: its text names the setting
/// (or the file) at fault, and says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// A setting has a value that cannot be used. `file` is the
    /// configuration file the value came from, when it came from one.
    Value { setting: Setting, file: Option<PathBuf>, message: String },
    /// The configuration file has a key that is no setting.
    UnknownKey { file: PathBuf, key: String },
    /// The configuration file cannot be read, or is not TOML. `named` says
    /// whether `--config` (or `LENSERFIGHT_CONFIG`) named it.
    File { file: PathBuf, named: bool, message: String },
}

impl ConfigError {
    /// A bad value of `setting` given by a flag or the environment.
    pub fn value(setting: Setting, message: impl fmt::Display) -> Self {
        ConfigError::Value { setting, file: None, message: message.to_string() }
    }

    /// A bad value of `setting` found in the configuration file `file`.
    pub fn in_file(setting: Setting, file: &Path, message: impl fmt::Display) -> Self {
        ConfigError::Value { setting, file: Some(file.to_owned()), message: message.to_string() }
    }

    /// The setting at fault, if the error is about one.
    pub fn setting(&self) -> Option<Setting> {
        match self {
            ConfigError::Value { setting, .. } => Some(*setting),
            _ => None,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Value { setting, file: None, message } => {
                write!(f, "configuration error: {setting}: {message}")
            }
            ConfigError::Value { setting, file: Some(file), message } => {
                write!(f, "configuration error: {} in {}: {message}", setting.key(), file.display())
            }
            ConfigError::UnknownKey { file, key } => {
                let known: Vec<&str> = Setting::ALL.iter().map(|s| s.key()).collect();
                write!(
                    f,
                    "configuration error: {}: unknown key {key:?}; the keys are {}",
                    file.display(),
                    known.join(", ")
                )
            }
            ConfigError::File { file, named: true, message } => {
                write!(f, "configuration error: {CONFIG_ENV} ({CONFIG_FLAG}): {}: {message}", file.display())
            }
            ConfigError::File { file, named: false, message } => {
                write!(f, "configuration error: {}: {message}", file.display())
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// lf-model checks the model settings itself; its error names the variable.
impl From<lf_model::ConfigError> for ConfigError {
    fn from(e: lf_model::ConfigError) -> Self {
        ConfigError::value(Setting::from_env(e.key()).unwrap_or(Setting::ModelBaseUrl), e.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every setting's names as users write them (in scripts, unit files
    /// and configuration files), in the order of the README's tables: a
    /// renamed setting breaks their configuration, so it shows up here.
    const PUBLISHED: [(&str, &str, &str); 47] = [
        ("database_url", "LENSERFIGHT_DATABASE_URL", "--database-url"),
        ("lenser_id", "LENSERFIGHT_LENSER_ID", "--lenser-id"),
        ("toolsets", "LENSERFIGHT_TOOLSETS", "--toolsets"),
        ("dynamic_toolsets", "LENSERFIGHT_DYNAMIC_TOOLSETS", "--dynamic-toolsets"),
        ("read_only", "LENSERFIGHT_READ_ONLY", "--read-only"),
        ("log", "LENSERFIGHT_LOG", "--log"),
        ("log_json", "LENSERFIGHT_LOG_JSON", "--log-json"),
        ("linger_us", "LENSERFIGHT_LINGER_US", "--linger-us"),
        ("model_base_url", "LENSERFIGHT_MODEL_BASE_URL", "--model-base-url"),
        ("model_api_key", "LENSERFIGHT_MODEL_API_KEY", "--model-api-key"),
        ("model_name", "LENSERFIGHT_MODEL_NAME", "--model-name"),
        ("secret_key", "LENSERFIGHT_SECRET_KEY", "--secret-key"),
        ("egress_allow", "LENSERFIGHT_EGRESS_ALLOW", "--egress-allow"),
        ("run_budget_credits", "LENSERFIGHT_RUN_BUDGET_CREDITS", "--run-budget-credits"),
        ("credits_per_1k_tokens", "LENSERFIGHT_CREDITS_PER_1K_TOKENS", "--credits-per-1k-tokens"),
        ("run_timeout", "LENSERFIGHT_RUN_TIMEOUT", "--run-timeout"),
        ("step_timeout", "LENSERFIGHT_STEP_TIMEOUT", "--step-timeout"),
        ("parallel_steps", "LENSERFIGHT_PARALLEL_STEPS", "--parallel-steps"),
        ("run_lease", "LENSERFIGHT_RUN_LEASE", "--run-lease"),
        ("runs_per_process", "LENSERFIGHT_RUNS_PER_PROCESS", "--runs-per-process"),
        ("runs_per_starter", "LENSERFIGHT_RUNS_PER_STARTER", "--runs-per-starter"),
        ("runner_grace", "LENSERFIGHT_RUNNER_GRACE", "--runner-grace"),
        ("agents_per_owner", "LENSERFIGHT_AGENTS_PER_OWNER", "--agents-per-owner"),
        ("event_tree_max", "LENSERFIGHT_EVENT_TREE_MAX", "--event-tree-max"),
        ("event_runs_per_minute", "LENSERFIGHT_EVENT_RUNS_PER_MINUTE", "--event-runs-per-minute"),
        ("otlp_endpoint", "LENSERFIGHT_OTLP_ENDPOINT", "--otlp-endpoint"),
        ("metrics_file", "LENSERFIGHT_METRICS_FILE", "--metrics-file"),
        ("no_metrics", "LENSERFIGHT_NO_METRICS", "--no-metrics"),
        ("bind", "LENSERFIGHT_BIND", "--bind"),
        ("public_url", "LENSERFIGHT_PUBLIC_URL", "--public-url"),
        ("allowed_origins", "LENSERFIGHT_ALLOWED_ORIGINS", "--allowed-origins"),
        ("request_timeout", "LENSERFIGHT_REQUEST_TIMEOUT", "--request-timeout"),
        ("header_timeout", "LENSERFIGHT_HEADER_TIMEOUT", "--header-timeout"),
        ("idle_timeout", "LENSERFIGHT_IDLE_TIMEOUT", "--idle-timeout"),
        ("max_connections", "LENSERFIGHT_MAX_CONNECTIONS", "--max-connections"),
        (
            "max_connections_per_client",
            "LENSERFIGHT_MAX_CONNECTIONS_PER_CLIENT",
            "--max-connections-per-client",
        ),
        ("body_grace", "LENSERFIGHT_BODY_GRACE", "--body-grace"),
        ("min_body_rate", "LENSERFIGHT_MIN_BODY_RATE", "--min-body-rate"),
        ("shutdown_timeout", "LENSERFIGHT_SHUTDOWN_TIMEOUT", "--shutdown-timeout"),
        ("trusted_proxies", "LENSERFIGHT_TRUSTED_PROXIES", "--trusted-proxies"),
        ("registrations_per_hour", "LENSERFIGHT_REGISTRATIONS_PER_HOUR", "--registrations-per-hour"),
        ("hooks_per_minute", "LENSERFIGHT_HOOKS_PER_MINUTE", "--hooks-per-minute"),
        ("sessions", "LENSERFIGHT_SESSIONS", "--sessions"),
        ("dev_lenser", "LENSERFIGHT_DEV_LENSER", "--dev-lenser"),
        ("metrics_bind", "LENSERFIGHT_METRICS_BIND", "--metrics-bind"),
        (
            "client_metadata_http_loopback",
            "LENSERFIGHT_CLIENT_METADATA_HTTP_LOOPBACK",
            "--client-metadata-http-loopback",
        ),
        ("no_pages", "LENSERFIGHT_NO_PAGES", "--no-pages"),
    ];

    #[test]
    fn every_setting_keeps_its_published_names() {
        let names: Vec<(&str, &str, &str)> =
            Setting::ALL.iter().map(|s| (s.key(), s.env(), s.flag())).collect();
        assert_eq!(names, PUBLISHED);
        for (setting, variable) in [
            (Setting::ModelBaseUrl, lf_model::BASE_URL_KEY),
            (Setting::ModelApiKey, lf_model::API_KEY_KEY),
            (Setting::ModelName, lf_model::MODEL_NAME_KEY),
            (Setting::EgressAllow, lf_egress::ALLOW_KEY),
        ] {
            assert_eq!(setting.env(), variable, "the variable the crate reads itself");
        }
    }

    #[test]
    fn the_names_follow_one_rule_and_find_their_setting() {
        for (i, s) in Setting::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i, "TABLE is in the enum's order");
            assert!(
                s.key().bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}: a key is lowercase, so that its variable names it alone",
                s.key()
            );
            assert_eq!(Setting::from_key(s.key()), Some(*s));
            assert_eq!(Setting::from_env(s.env()), Some(*s));
        }
        assert_eq!(names_of("config"), (CONFIG_ENV.to_owned(), CONFIG_FLAG.to_owned()), "the file's own");
    }

    #[test]
    fn a_command_is_checked_against_the_settings() {
        use clap::CommandFactory;
        #[derive(clap::Parser)]
        struct Shared {
            #[command(flatten)]
            common: crate::CommonArgs,
        }
        let e = check_arguments(&Shared::command(), Reader::Stdio).unwrap_err();
        assert_eq!(e, "lenser_id has no argument; linger_us has no argument; metrics_file has no argument");
        #[derive(clap::Parser)]
        struct Odd {
            #[command(flatten)]
            common: crate::CommonArgs,
            #[arg(long, env = "LENSERFIGHT_LENSER")]
            lenser_id: Option<String>,
            #[arg(long)]
            bind: Option<String>,
            #[arg(long, env = "LENSERFIGHT_LINGER_US")]
            linger: Option<u64>,
        }
        let e = check_arguments(&Odd::command(), Reader::Stdio).unwrap_err();
        assert!(e.contains("lenser_id's variable is not LENSERFIGHT_LENSER_ID"), "{e}");
        assert!(e.contains("bind is not read by this binary"), "{e}");
        assert!(e.contains("linger is no setting"), "{e}");
    }

    #[test]
    fn messages_name_the_key_where_it_was_set() {
        let e = ConfigError::value(Setting::Bind, "not an address");
        assert_eq!(e.to_string(), "configuration error: LENSERFIGHT_BIND (--bind): not an address");
        let e = ConfigError::in_file(Setting::Bind, Path::new("/etc/lf.toml"), "not an address");
        assert_eq!(e.to_string(), "configuration error: bind in /etc/lf.toml: not an address");
        let model = lf_model::ModelConfig::from_values(Some("ftp://x"), None, Some("m")).unwrap_err();
        assert_eq!(
            ConfigError::from(model.clone()).to_string(),
            model.to_string(),
            "the same text as lf-model's"
        );
    }
}
