//! Which model the server talks to: `LENSERFIGHT_MODEL_BASE_URL`,
//! `LENSERFIGHT_MODEL_API_KEY` and `LENSERFIGHT_MODEL_NAME`, from the
//! environment or from command-line flags, validated once at start-up.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use lf_core::ModelProvider;
use reqwest::Url;

use crate::client::OpenAiCompatible;
use crate::offline::OfflineProvider;

/// The environment variable of the API base URL.
pub const BASE_URL_KEY: &str = "LENSERFIGHT_MODEL_BASE_URL";
/// The environment variable of the API key.
pub const API_KEY_KEY: &str = "LENSERFIGHT_MODEL_API_KEY";
/// The environment variable of the default model name.
pub const MODEL_NAME_KEY: &str = "LENSERFIGHT_MODEL_NAME";

/// How long one attempt may take, answer included, unless configured
/// otherwise. Generous: a local model on a CPU can take minutes for a long
/// judge answer.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The largest answer body read, unless configured otherwise.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;
/// The wait before retrying after a 5xx answer or a refused connection.
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(500);
/// The longest `Retry-After` honoured; a longer one is answered THROTTLED at once.
pub const DEFAULT_MAX_RETRY_WAIT: Duration = Duration::from_secs(30);
/// The longest model name accepted.
pub const MAX_MODEL_NAME_CHARS: usize = 200;

/// A configuration mistake: which setting, and what is wrong with it. Its
/// text reads like the binaries' other configuration errors:
/// `configuration error: LENSERFIGHT_MODEL_NAME (--model-name): ...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    key: &'static str,
    message: String,
}

impl ConfigError {
    fn new(key: &'static str, message: impl Into<String>) -> Self {
        Self { key, message: message.into() }
    }

    /// The environment variable of the offending setting.
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// What is wrong, without the key.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn flag(&self) -> &'static str {
        match self.key {
            BASE_URL_KEY => "--model-base-url",
            API_KEY_KEY => "--model-api-key",
            _ => "--model-name",
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "configuration error: {} ({}): {}", self.key, self.flag(), self.message)
    }
}

impl std::error::Error for ConfigError {}

/// An API key: printable ASCII without spaces, sent as a bearer token. Its
/// `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Checks a key (surrounding whitespace is dropped). The error message
    /// never repeats the value.
    pub fn parse(key: &str) -> Result<Self, String> {
        let key = key.trim();
        if key.is_empty() {
            return Err("the API key is empty".into());
        }
        if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("the API key must be printable ASCII without spaces or control characters".into());
        }
        Ok(Self(key.to_owned()))
    }

    /// The key itself, to send.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Checks a model name: 1 to [`MAX_MODEL_NAME_CHARS`] characters without
/// control characters, surrounding whitespace dropped.
pub fn parse_model_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("the model name is empty".into());
    }
    if name.chars().count() > MAX_MODEL_NAME_CHARS {
        return Err(format!("the model name is longer than {MAX_MODEL_NAME_CHARS} characters"));
    }
    if name.chars().any(char::is_control) {
        return Err("the model name contains control characters".into());
    }
    Ok(name.to_owned())
}

/// Checks a base URL such as `https://api.openai.com/v1` or
/// `http://localhost:11434/v1`: http or https, a host, no user name or
/// password (the key goes in `LENSERFIGHT_MODEL_API_KEY`), no query or
/// fragment. A trailing `/` or `/chat/completions` is dropped, so the
/// endpoint is always `{base}/chat/completions`.
pub fn parse_base_url(url: &str) -> Result<Url, String> {
    let mut url = Url::parse(url.trim())
        .map_err(|e| format!("not a URL ({e}); expected e.g. https://api.openai.com/v1"))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(format!("the scheme must be http or https, not {}", url.scheme()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("the URL has no host".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("the URL must not carry credentials; put the key in {API_KEY_KEY}"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("the URL must not have a query or fragment".into());
    }
    let path = url.path().trim_end_matches('/');
    let path = path.strip_suffix("/chat/completions").unwrap_or(path).trim_end_matches('/').to_owned();
    url.set_path(&path);
    Ok(url)
}

/// Everything the OpenAI-compatible client needs. [`EndpointConfig::new`]
/// fills the limits with their defaults; change the public fields to tune them.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct EndpointConfig {
    /// The API base, checked by [`parse_base_url`]; requests go to `{base_url}/chat/completions`.
    pub base_url: Url,
    /// Sent as `Authorization: Bearer <key>` when set (Ollama and llama.cpp need none).
    pub api_key: Option<ApiKey>,
    /// The model asked when a request names none, checked by [`parse_model_name`].
    pub model: String,
    /// How long one attempt may take, from connecting to the last byte of the answer.
    pub timeout: Duration,
    /// Answers with a larger body are refused (INTERNAL), unread.
    pub max_response_bytes: usize,
    /// The wait before the one retry after a 5xx answer or a refused connection.
    pub retry_backoff: Duration,
    /// The longest `Retry-After` of a 429 answer that is waited out.
    pub max_retry_wait: Duration,
}

impl EndpointConfig {
    /// A configuration with the default limits.
    pub fn new(base_url: Url, api_key: Option<ApiKey>, model: String) -> Self {
        Self {
            base_url,
            api_key,
            model,
            timeout: DEFAULT_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            retry_backoff: DEFAULT_RETRY_BACKOFF,
            max_retry_wait: DEFAULT_MAX_RETRY_WAIT,
        }
    }
}

/// Where model answers come from.
#[derive(Clone, Debug, Default)]
pub enum ModelConfig {
    /// No base URL set: the deterministic [`OfflineProvider`], which names
    /// itself in every answer.
    #[default]
    Offline,
    /// An OpenAI-compatible chat-completions API.
    OpenAiCompatible(EndpointConfig),
}

fn set(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

impl ModelConfig {
    /// Reads `LENSERFIGHT_MODEL_BASE_URL`, `_MODEL_API_KEY` and
    /// `_MODEL_NAME`; see [`ModelConfig::from_values`]. A value that is not
    /// valid Unicode is an error naming its key.
    pub fn from_env() -> Result<Self, ConfigError> {
        let read = |key: &'static str| match std::env::var(key) {
            Ok(v) => Ok(Some(v)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(ConfigError::new(key, "the value is not valid UTF-8"))
            }
        };
        let base_url = read(BASE_URL_KEY)?;
        let api_key = read(API_KEY_KEY)?;
        let model = read(MODEL_NAME_KEY)?;
        Self::from_values(base_url.as_deref(), api_key.as_deref(), model.as_deref())
    }

    /// Validates the three settings (empty or blank counts as unset). No
    /// base URL: [`ModelConfig::Offline`], whatever the other two say. A base
    /// URL needs a model name; the key stays optional. An error names the
    /// setting at fault and never repeats the key.
    pub fn from_values(
        base_url: Option<&str>,
        api_key: Option<&str>,
        model: Option<&str>,
    ) -> Result<Self, ConfigError> {
        let Some(base_url) = set(base_url) else {
            if set(api_key).is_some() || set(model).is_some() {
                tracing::warn!(
                    "{API_KEY_KEY} or {MODEL_NAME_KEY} is set but {BASE_URL_KEY} is not: using the offline deterministic provider"
                );
            }
            return Ok(Self::Offline);
        };
        let base_url = parse_base_url(base_url).map_err(|m| ConfigError::new(BASE_URL_KEY, m))?;
        let api_key =
            set(api_key).map(ApiKey::parse).transpose().map_err(|m| ConfigError::new(API_KEY_KEY, m))?;
        let model = match set(model) {
            Some(m) => parse_model_name(m).map_err(|m| ConfigError::new(MODEL_NAME_KEY, m))?,
            None => {
                return Err(ConfigError::new(
                    MODEL_NAME_KEY,
                    format!(
                        "{BASE_URL_KEY} is set, so name the model to ask (e.g. gpt-4o-mini, or llama3.2 on Ollama)"
                    ),
                ));
            }
        };
        Ok(Self::OpenAiCompatible(EndpointConfig::new(base_url, api_key, model)))
    }
}

/// The model settings as command-line flags, each with its environment
/// variable; `#[command(flatten)]` them into a binary's arguments.
#[derive(clap::Args, Clone, Default)]
pub struct ModelArgs {
    /// The API base URL, e.g. `https://api.openai.com/v1`; unset: the offline provider.
    #[arg(
        long,
        env = BASE_URL_KEY,
        value_name = "URL",
        help = "Base URL of an OpenAI-compatible chat-completions API, e.g. https://api.openai.com/v1 or http://localhost:11434/v1 (Ollama) [default: none: the offline deterministic judge]"
    )]
    pub model_base_url: Option<String>,

    /// API key sent as a bearer token. Prefer the environment variable: other users can read command lines.
    #[arg(long, env = API_KEY_KEY, value_name = "KEY", hide_env_values = true)]
    pub model_api_key: Option<String>,

    /// The model to ask when a battle names none (its ai_judge_model_key), e.g. gpt-4o-mini.
    #[arg(long, env = MODEL_NAME_KEY, value_name = "NAME")]
    pub model_name: Option<String>,
}

impl fmt::Debug for ModelArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelArgs")
            .field("model_base_url", &self.model_base_url)
            .field("model_api_key", &self.model_api_key.as_ref().map(|_| "<redacted>"))
            .field("model_name", &self.model_name)
            .finish()
    }
}

impl ModelArgs {
    /// Validates the settings; see [`ModelConfig::from_values`].
    pub fn config(&self) -> Result<ModelConfig, ConfigError> {
        ModelConfig::from_values(
            self.model_base_url.as_deref(),
            self.model_api_key.as_deref(),
            self.model_name.as_deref(),
        )
    }

    /// The provider these settings describe; see [`provider_from_config`].
    pub fn provider(&self) -> Result<Arc<dyn ModelProvider>, ConfigError> {
        provider_from_config(&self.config()?)
    }
}

/// The provider a configuration describes: the OpenAI-compatible client when
/// a base URL is set, the deterministic [`OfflineProvider`] otherwise. Fails
/// only when the HTTP client cannot be built (for an https base URL on a
/// system without CA certificates), naming `LENSERFIGHT_MODEL_BASE_URL`.
pub fn provider_from_config(config: &ModelConfig) -> Result<Arc<dyn ModelProvider>, ConfigError> {
    match config {
        ModelConfig::Offline => {
            tracing::info!(
                "no model configured ({BASE_URL_KEY} unset): AI judging uses the offline deterministic provider"
            );
            Ok(Arc::new(OfflineProvider::new()))
        }
        ModelConfig::OpenAiCompatible(endpoint) => {
            let client = OpenAiCompatible::new(endpoint.clone())
                .map_err(|e| ConfigError::new(BASE_URL_KEY, e.message().to_owned()))?;
            tracing::info!(base_url = %endpoint.base_url, model = %endpoint.model, "model calls go to an OpenAI-compatible API");
            Ok(Arc::new(client))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_set_is_offline() {
        assert!(matches!(ModelConfig::from_values(None, None, None), Ok(ModelConfig::Offline)));
        assert!(matches!(ModelConfig::from_values(Some("  "), None, Some("m")), Ok(ModelConfig::Offline)));
    }

    #[test]
    fn a_full_configuration_is_kept() {
        let ModelConfig::OpenAiCompatible(e) = ModelConfig::from_values(
            Some("https://api.openai.com/v1/"),
            Some(" sk-abc "),
            Some(" gpt-4o-mini "),
        )
        .unwrap() else {
            panic!("expected the OpenAI-compatible configuration")
        };
        assert_eq!(e.base_url.as_str(), "https://api.openai.com/v1");
        assert_eq!(e.api_key.as_ref().map(ApiKey::expose), Some("sk-abc"));
        assert_eq!(e.model, "gpt-4o-mini");
        assert_eq!(e.timeout, DEFAULT_TIMEOUT);
    }

    #[test]
    fn the_endpoint_path_is_normalised() {
        for (given, base) in [
            ("http://localhost:11434/v1", "http://localhost:11434/v1"),
            ("http://localhost:11434/v1/chat/completions", "http://localhost:11434/v1"),
            ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/"),
        ] {
            assert_eq!(parse_base_url(given).unwrap().as_str(), base, "{given}");
        }
    }

    #[test]
    fn bad_values_name_their_key() {
        let cases = [
            (Some("localhost:11434"), None, Some("m"), BASE_URL_KEY),
            (Some("ftp://example.com/v1"), None, Some("m"), BASE_URL_KEY),
            (Some("https://user:pw@example.com/v1"), None, Some("m"), BASE_URL_KEY),
            (Some("https://example.com/v1?x=1"), None, Some("m"), BASE_URL_KEY),
            (Some("https://example.com/v1"), Some("sk abc"), Some("m"), API_KEY_KEY),
            (Some("https://example.com/v1"), None, None, MODEL_NAME_KEY),
            (Some("https://example.com/v1"), None, Some("a\nb"), MODEL_NAME_KEY),
        ];
        for (base, key, model, want) in cases {
            let err = ModelConfig::from_values(base, key, model).unwrap_err();
            assert_eq!(err.key(), want, "{base:?} {model:?}");
            assert!(err.to_string().starts_with(&format!("configuration error: {want} (--")), "{err}");
        }
        let long = "m".repeat(MAX_MODEL_NAME_CHARS + 1);
        let err = ModelConfig::from_values(Some("https://example.com/v1"), None, Some(&long)).unwrap_err();
        assert_eq!(err.key(), MODEL_NAME_KEY);
    }

    #[test]
    fn the_key_is_never_shown() {
        let err = ModelConfig::from_values(Some("https://example.com/v1"), Some("sk-secret\u{7}"), Some("m"))
            .unwrap_err();
        assert!(!err.to_string().contains("sk-secret"), "{err}");
        let key = ApiKey::parse("sk-secret").unwrap();
        assert!(!format!("{key:?}").contains("sk-secret"));
        let args = ModelArgs {
            model_base_url: Some("https://example.com/v1".into()),
            model_api_key: Some("sk-secret".into()),
            model_name: Some("m".into()),
        };
        assert!(!format!("{args:?}").contains("sk-secret"));
        let ModelConfig::OpenAiCompatible(e) = args.config().unwrap() else {
            panic!("expected a remote model")
        };
        assert!(!format!("{e:?}").contains("sk-secret"));
    }

    #[test]
    fn args_flatten_into_a_command() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            model: ModelArgs,
        }
        let cli = Cli::try_parse_from([
            "x",
            "--model-base-url",
            "http://localhost:11434/v1",
            "--model-name",
            "llama3.2",
        ])
        .unwrap();
        let ModelConfig::OpenAiCompatible(e) = cli.model.config().unwrap() else {
            panic!("expected a remote model")
        };
        assert_eq!(
            (e.base_url.as_str(), e.model.as_str(), e.api_key.is_none()),
            ("http://localhost:11434/v1", "llama3.2", true)
        );
        let help = <Cli as clap::CommandFactory>::command().render_help().to_string();
        for flag in
            ["--model-base-url", "--model-api-key", "--model-name", BASE_URL_KEY, API_KEY_KEY, MODEL_NAME_KEY]
        {
            assert!(help.contains(flag), "{flag} in {help}");
        }
    }

    #[test]
    fn providers_follow_the_configuration() {
        let offline = provider_from_config(&ModelConfig::Offline).unwrap();
        assert_eq!(offline.name(), lf_core::OFFLINE_MODEL_NAME);
        let remote =
            ModelConfig::from_values(Some("https://api.openai.com/v1"), Some("sk-x"), Some("gpt-4o-mini"))
                .unwrap();
        assert_eq!(provider_from_config(&remote).unwrap().name(), crate::PROVIDER_NAME);
    }
}
