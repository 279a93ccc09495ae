//! Model calls over HTTP: [`OpenAiCompatible`], the [`lf_core::ModelProvider`]
//! that speaks the OpenAI chat-completions API (OpenAI, Ollama, vLLM,
//! llama.cpp's server), and the configuration that picks it or, when no model
//! is configured, lf-battle's deterministic [`lf_battle::OfflineProvider`].
//!
//! A binary flattens [`ModelArgs`] into its arguments (or calls
//! [`ModelConfig::from_env`]) and builds its provider once at start-up:
//!
//! ```
//! let config = lf_model::ModelConfig::from_values(None, None, None).unwrap();
//! let provider = lf_model::provider_from_config(&config).unwrap();
//! assert_eq!(provider.name(), lf_battle::OFFLINE_MODEL_NAME);
//!
//! let config = lf_model::ModelConfig::from_values(Some("http://localhost:11434/v1"), None, Some("llama3.2")).unwrap();
//! assert_eq!(lf_model::provider_from_config(&config).unwrap().name(), "openai-compatible");
//! ```
//!
//! TLS is rustls with the ring provider and the system's CA certificates
//! (no aws-lc-rs, so no cmake); HTTP/1.1 only. The client needs a tokio
//! runtime (with the time driver) to run its calls.

mod client;
mod config;

pub use client::{OpenAiCompatible, PROVIDER_NAME, client_builder};
pub use config::{
    API_KEY_KEY, ApiKey, BASE_URL_KEY, ConfigError, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_RETRY_BACKOFF, DEFAULT_TIMEOUT, EndpointConfig, MAX_MODEL_NAME_CHARS, MODEL_NAME_KEY, ModelArgs,
    ModelConfig, parse_base_url, parse_model_name, provider_from_config,
};
