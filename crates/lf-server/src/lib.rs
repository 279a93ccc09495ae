//! The composition root of the LenserFight servers: everything
//! `lf-mcp-stdio` and `lf-mcp-http` do before and after they serve.
//!
//! - Configuration: [`CommonArgs`], the clap arguments both binaries
//!   flatten, checked into a [`Config`]; every setting's three names
//!   ([`Setting`]: file key, `LENSERFIGHT_*` variable, flag); the optional
//!   TOML configuration file ([`file`]), read by [`parse`] so that flags win,
//!   then the environment, then the file; and [`ConfigError`], the one
//!   start-up error, whose text names the key where it was set.
//! - Wiring: [`open_database`] (lf-store), [`services`] (stores into the
//!   domain services, the model provider behind them), [`build_server`]
//!   (the catalog's `LfServer` and the workflow runner, [`Built`]),
//!   [`workflow_service`] and
//!   [`connection_service`].
//! - Saved connections' secrets at rest: [`sealer`] ([`KeySealer`] under
//!   `LENSERFIGHT_SECRET_KEY` or a 0600 key file in the data directory),
//!   and the `connection add | list | remove` commands both binaries run
//!   ([`ConnectionCommand`], [`run_connection_command`]).
//! - Background work: [`Background`], lf-core's [`lf_core::Spawner`] on
//!   tokio with a shutdown deadline.
//! - The stdio server's identity when none is configured: [`local_lenser`],
//!   created on first start and kept in the database.
//!
//! lf-server knows no transport: no MCP framing, no HTTP, no rmcp. It holds
//! no domain rule either; it only picks implementations and hands them to
//! each other. Invariants: only the binaries, xtask and tests depend on it;
//! a setting has exactly one key, one variable and one flag, derived by one
//! rule; a configuration mistake stops start-up with a [`ConfigError`] before
//! anything is served.

mod agent_ledger;
mod agent_tools;
mod background;
mod config;
mod connection_cli;
pub mod file;
mod identity;
mod lenses;
mod models;
pub mod sealer;
mod settings;
mod wiring;

pub use agent_ledger::{AgentLedger, FLUSH_EVERY};
pub use agent_tools::CatalogTools;
pub use background::{Background, SHUTDOWN_GRACE, Shutdown};
pub use config::{CommonArgs, Config, KeyText, RunSettings};
pub use connection_cli::{
    AsLenser, ByHandle, CommandError, ConnectionCommand, ConnectionOwner, run_connection_command,
};
pub use file::{Arguments, FromFile, ParseError, default_config_path, parse, try_parse_from};
pub use identity::{LocalLenser, local_lenser};
pub use lenses::WorkflowLenses;
pub use models::Resolver;
pub use sealer::{KeySealer, SecretKey};
pub use settings::{CONFIG_ENV, CONFIG_FLAG, ConfigError, Kind, Reader, Setting, check_arguments};
pub use wiring::{
    Built, build_server, connection_service, mcp_servers, open_database, services, workflow_service,
};

// The binaries drive the runner through the composition root.
pub use lf_runner::Runner;
// The binaries reach the database through the composition root, not lf-store.
pub use lf_store::{Database, redact_url};
