//! The operator's endpoints: `default` (the `LENSERFIGHT_MODEL_*` settings)
//! and the `[[models]]` entries of the configuration file, each an
//! OpenAI-compatible API with its own key, concurrency limit and timeout.
//! A model profile names one of them (or a saved connection); the
//! composition root's resolver asks [`Endpoints::get`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lf_core::{
    ChatRequest, ChatResponse, LfError, LfResult, ModelProvider, ToolChatRequest, ToolChatResponse,
};
use tokio::sync::Semaphore;

use crate::client::OpenAiCompatible;
use crate::config::{ApiKey, EndpointConfig, parse_base_url, parse_model_name};

/// The name of the endpoint of the `LENSERFIGHT_MODEL_*` settings.
pub const DEFAULT_ENDPOINT: &str = "default";
/// Concurrent requests to one `[[models]]` endpoint, unless configured.
pub const DEFAULT_CONCURRENCY: u64 = 4;
/// Most concurrent requests one endpoint may be given.
pub const MAX_CONCURRENCY: u64 = 256;

/// A `[[models]]` entry as the configuration file gives it, unchecked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawEndpoint {
    pub name: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    /// The environment variable holding the key.
    pub api_key_env: Option<String>,
    /// The model asked when a request names none.
    pub model: Option<String>,
    pub concurrency: Option<u64>,
    /// Seconds one attempt may take.
    pub timeout: Option<u64>,
}

/// A checked `[[models]]` entry.
#[derive(Clone, Debug)]
pub struct NamedEndpoint {
    pub name: String,
    pub config: EndpointConfig,
    /// The model asked when a request names none.
    pub model: Option<String>,
    pub concurrency: usize,
}

impl NamedEndpoint {
    /// Checks `raw`, reading `api_key_env` through `env`. The error names
    /// the entry's field (`base_url`) and never repeats a key.
    pub fn parse(
        raw: &RawEndpoint,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, (&'static str, String)> {
        let name = raw.name.as_deref().map(str::trim).unwrap_or_default();
        let name_ok = !name.is_empty()
            && name.len() <= 64
            && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !name_ok {
            return Err(("name", "a name of 1 to 64 letters, digits, . _ or - is required".into()));
        }
        if name == DEFAULT_ENDPOINT {
            return Err((
                "name",
                "default is the endpoint of the model_base_url, model_api_key and model_name settings: name this one otherwise".into(),
            ));
        }
        let base_url = raw.base_url.as_deref().ok_or(("base_url", "a base URL is required".to_owned()))?;
        let base_url = parse_base_url(base_url).map_err(|m| ("base_url", m))?;
        let key = match (&raw.api_key, &raw.api_key_env) {
            (Some(_), Some(_)) => return Err(("api_key", "give api_key or api_key_env, not both".into())),
            (Some(k), None) => Some(k.clone()),
            (None, Some(var)) => Some(
                env(var.trim())
                    .ok_or(("api_key_env", format!("the environment variable {} is not set", var.trim())))?,
            ),
            (None, None) => None,
        };
        let api_key = key.as_deref().map(ApiKey::parse).transpose().map_err(|m| ("api_key", m))?;
        let model = raw.model.as_deref().map(parse_model_name).transpose().map_err(|m| ("model", m))?;
        let concurrency = raw.concurrency.unwrap_or(DEFAULT_CONCURRENCY);
        if !(1..=MAX_CONCURRENCY).contains(&concurrency) {
            return Err(("concurrency", format!("must be 1 to {MAX_CONCURRENCY}, got {concurrency}")));
        }
        let mut config = EndpointConfig::new(base_url, api_key, model.clone().unwrap_or_default());
        if let Some(t) = raw.timeout {
            if !(1..=3_600).contains(&t) {
                return Err(("timeout", format!("must be 1 to 3600 seconds, got {t}")));
            }
            config.timeout = Duration::from_secs(t);
        }
        Ok(Self { name: name.to_owned(), config, model, concurrency: concurrency as usize })
    }
}

/// The operator's endpoints, each a provider.
#[derive(Clone)]
pub struct Endpoints {
    default: Arc<dyn ModelProvider>,
    default_model: Option<String>,
    named: Vec<(NamedEndpoint, Arc<dyn ModelProvider>)>,
}

impl Endpoints {
    /// Only `default`: `provider`, asking `model` when a request names none.
    pub fn new(default: Arc<dyn ModelProvider>, model: Option<String>) -> Self {
        Self { default, default_model: model, named: Vec::new() }
    }

    /// Adds the `[[models]]` endpoints; INVALID_ARGUMENT naming an entry
    /// declared twice or whose client cannot be built.
    pub fn with(mut self, endpoints: Vec<NamedEndpoint>) -> LfResult<Self> {
        for e in endpoints {
            if self.named.iter().any(|(n, _)| n.name == e.name) {
                return Err(LfError::invalid_argument(format!("the endpoint {} is declared twice", e.name)));
            }
            let client = OpenAiCompatible::new(e.config.clone())?;
            let limited =
                Limited { inner: Arc::new(client), permits: Arc::new(Semaphore::new(e.concurrency)) };
            self.named.push((e, Arc::new(limited)));
        }
        Ok(self)
    }

    /// The provider of endpoint `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn ModelProvider>> {
        if name == DEFAULT_ENDPOINT {
            return Some(self.default.clone());
        }
        self.named.iter().find(|(e, _)| e.name == name).map(|(_, p)| p.clone())
    }

    /// Every endpoint's name and the model it asks by default, `default` first.
    pub fn listed(&self) -> Vec<(String, Option<String>)> {
        let mut all = vec![(DEFAULT_ENDPOINT.to_owned(), self.default_model.clone())];
        all.extend(self.named.iter().map(|(e, _)| (e.name.clone(), e.model.clone())));
        all
    }
}

impl std::fmt::Debug for Endpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.listed().iter().map(|(name, _)| name)).finish()
    }
}

/// A provider asked by at most `permits` requests at once; the others wait
/// their turn.
struct Limited {
    inner: Arc<dyn ModelProvider>,
    permits: Arc<Semaphore>,
}

#[async_trait]
impl ModelProvider for Limited {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn chat(&self, request: ChatRequest) -> LfResult<ChatResponse> {
        let _turn = self.permits.acquire().await.map_err(LfError::internal)?;
        self.inner.chat(request).await
    }

    async fn chat_with_tools(&self, request: ToolChatRequest) -> LfResult<ToolChatResponse> {
        let _turn = self.permits.acquire().await.map_err(LfError::internal)?;
        self.inner.chat_with_tools(request).await
    }
}

/// A client of an OpenAI-compatible API at `base_url` with `api_key`, for a
/// model profile's saved connection, its host names looked up by `dns`
/// (the egress guard's resolver: see [`OpenAiCompatible::guarded`]).
/// INVALID_ARGUMENT on a bad URL or key, never repeating the key.
pub fn connection_client(
    base_url: &str,
    api_key: Option<&str>,
    model: &str,
    dns: Arc<dyn reqwest::dns::Resolve>,
) -> LfResult<Arc<dyn ModelProvider>> {
    let base_url = parse_base_url(base_url).map_err(LfError::invalid_argument)?;
    let api_key = api_key.map(ApiKey::parse).transpose().map_err(LfError::invalid_argument)?;
    let model = parse_model_name(model).map_err(LfError::invalid_argument)?;
    Ok(Arc::new(OpenAiCompatible::guarded(EndpointConfig::new(base_url, api_key, model), dns)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(name: &str) -> RawEndpoint {
        RawEndpoint {
            name: Some(name.into()),
            base_url: Some("http://localhost:11434/v1".into()),
            ..Default::default()
        }
    }

    #[test]
    fn an_entry_is_checked_and_its_key_read_from_the_environment() {
        let env = |v: &str| (v == "OPENAI_KEY").then(|| "sk-from-env".to_owned());
        let e = NamedEndpoint::parse(
            &RawEndpoint {
                api_key_env: Some("OPENAI_KEY".into()),
                concurrency: Some(2),
                timeout: Some(5),
                ..raw("openai")
            },
            env,
        )
        .unwrap();
        assert_eq!((e.concurrency, e.config.timeout), (2, Duration::from_secs(5)));
        assert_eq!(e.config.api_key.as_ref().map(ApiKey::expose), Some("sk-from-env"));
        let bad = [
            (RawEndpoint { name: None, ..raw("x") }, "name"),
            (raw("default"), "name"),
            (RawEndpoint { base_url: Some("ftp://x".into()), ..raw("x") }, "base_url"),
            (RawEndpoint { api_key_env: Some("NOPE".into()), ..raw("x") }, "api_key_env"),
            (RawEndpoint { api_key: Some("sk bad".into()), ..raw("x") }, "api_key"),
            (RawEndpoint { concurrency: Some(0), ..raw("x") }, "concurrency"),
            (RawEndpoint { timeout: Some(0), ..raw("x") }, "timeout"),
        ];
        for (given, field) in bad {
            let (f, m) = NamedEndpoint::parse(&given, env).unwrap_err();
            assert_eq!(f, field, "{given:?}: {m}");
            assert!(!m.contains("sk bad"));
        }
    }

    #[test]
    fn endpoints_are_found_by_name_default_first() {
        let offline: Arc<dyn ModelProvider> = Arc::new(crate::OfflineProvider::new());
        let a =
            NamedEndpoint::parse(&RawEndpoint { model: Some("llama3.2".into()), ..raw("ollama") }, |_| None)
                .unwrap();
        let all = Endpoints::new(offline, None).with(vec![a.clone()]).unwrap();
        assert_eq!(
            all.listed(),
            [("default".to_owned(), None), ("ollama".to_owned(), Some("llama3.2".to_owned()))]
        );
        assert!(all.get("ollama").is_some() && all.get("default").is_some() && all.get("nope").is_none());
        assert!(all.clone().with(vec![a]).is_err(), "declared twice");
    }
}
