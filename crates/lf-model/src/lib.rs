//! The model providers: [`OpenAiCompatible`], the [`lf_core::ModelProvider`]
//! that speaks the OpenAI chat-completions API (OpenAI, Ollama, vLLM,
//! llama.cpp's server), the deterministic [`OfflineProvider`], and the
//! configuration that picks one: the client when a base URL is set, the
//! offline provider otherwise.
//!
//! A binary flattens [`ModelArgs`] into its arguments (or calls
//! [`ModelConfig::from_env`]) and builds its provider once at start-up:
//!
//! ```
//! let config = lf_model::ModelConfig::from_values(None, None, None).unwrap();
//! let provider = lf_model::provider_from_config(&config).unwrap();
//! assert_eq!(provider.name(), lf_model::OFFLINE_MODEL_NAME);
//!
//! let config = lf_model::ModelConfig::from_values(Some("http://localhost:11434/v1"), None, Some("llama3.2")).unwrap();
//! assert_eq!(lf_model::provider_from_config(&config).unwrap().name(), "openai-compatible");
//! ```
//!
//! lf-model is an adapter: it depends on lf-core only, and knows no domain
//! crate, no battle and no judge. What an offline answer says is the
//! caller's business (the stand-in of [`lf_core::ChatRequest`]); the
//! provider only hands it back, named as what it is. The client never
//! sends the stand-in, never logs or returns the API key, bounds what it
//! reads, and retries once at most.
//!
//! TLS is rustls with the ring provider and the system's CA certificates
//! (no aws-lc-rs, so no cmake); HTTP/1.1 only. The client needs a tokio
//! runtime (with the time driver) to run its calls.

mod client;
mod config;
mod endpoints;
mod offline;

pub use client::{OpenAiCompatible, PROVIDER_NAME, client_builder, client_tls};
pub use config::{
    API_KEY_KEY, ApiKey, BASE_URL_KEY, ConfigError, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_RETRY_BACKOFF, DEFAULT_TIMEOUT, EndpointConfig, MAX_MODEL_NAME_CHARS, MODEL_NAME_KEY, ModelArgs,
    ModelConfig, parse_base_url, parse_model_name, provider_from_config,
};
pub use endpoints::{
    DEFAULT_CONCURRENCY, DEFAULT_ENDPOINT, Endpoints, MAX_CONCURRENCY, NamedEndpoint, RawEndpoint,
    connection_client,
};
// The name belongs to lf-core (services without a model record it too);
// here beside the provider that answers under it.
pub use lf_core::OFFLINE_MODEL_NAME;
pub use offline::OfflineProvider;
