//! The LenserFight MCP server over stdio: newline-delimited JSON-RPC on a
//! reader and a writer (stdin and stdout in the binary, an in-process pipe in
//! tests). Nothing but JSON-RPC is ever written to the writer; logs go to
//! stderr. Calls run as the Service principal acting as `LENSERFIGHT_LENSER_ID`.
//!
//! This crate holds no domain logic: it parses configuration, opens the
//! database, builds the catalog's [`LfServer`] and hands it to rmcp.

pub mod linger;
pub mod transport;

use std::sync::Arc;

use clap::Parser;
use lf_core::{LenserId, ModelProvider, Principal};
use lf_lens::LensService;
use lf_store::Database;
use lf_tools::{Catalog, CatalogOptions, Group, LfServer, Services};
use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

/// The settings both transports share: the database, which tools, and logs.
/// `lf-mcp-http` flattens these into its own arguments.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CommonArgs {
    /// Database URL: sqlite:PATH or postgres://... [default: lenserfight.db in the user's data directory]
    #[arg(long, env = "LENSERFIGHT_DATABASE_URL")]
    pub database_url: Option<String>,

    /// Only these tool groups, comma-separated (lens, battle).
    #[arg(long, env = "LENSERFIGHT_TOOLSETS", value_delimiter = ',')]
    pub toolsets: Option<Vec<String>>,

    /// Only list and allow Read tools.
    #[arg(long, env = "LENSERFIGHT_READ_ONLY")]
    pub read_only: bool,

    /// Log filter (tracing syntax), e.g. info or lf_store=debug. Logs go to stderr.
    #[arg(long, env = "LENSERFIGHT_LOG", default_value = "info,rmcp=warn")]
    pub log: String,

    /// Write logs as JSON lines.
    #[arg(long, env = "LENSERFIGHT_LOG_JSON")]
    pub log_json: bool,

    /// The model the AI judge asks (OpenAI-compatible; offline when unset).
    #[command(flatten)]
    pub model: lf_model::ModelArgs,
}

/// A configuration mistake: which key, and what is wrong with it.
pub fn bad_config(key: &str, message: impl std::fmt::Display) -> String {
    format!("configuration error: {key}: {message}")
}

impl CommonArgs {
    /// Sends logs to stderr, filtered as `--log` says.
    pub fn init_logs(&self) -> Result<(), String> {
        let filter = tracing_subscriber::EnvFilter::try_new(&self.log)
            .map_err(|e| bad_config("LENSERFIGHT_LOG (--log)", e))?;
        let builder =
            tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false);
        if self.log_json {
            builder.json().init();
        } else {
            builder.init();
        }
        Ok(())
    }

    /// The database URL, or the default file in the user's data directory.
    pub fn database_url(&self) -> Result<String, String> {
        match self.database_url.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(url) => Ok(url.to_owned()),
            None => lf_store::default_database_url()
                .map_err(|e| bad_config("LENSERFIGHT_DATABASE_URL (--database-url)", e.message())),
        }
    }

    /// The model provider the settings name: the OpenAI-compatible client,
    /// or the deterministic offline provider when no model is configured.
    pub fn model_provider(&self) -> Result<Arc<dyn ModelProvider>, String> {
        self.model.provider().map_err(|e| e.to_string())
    }

    /// Which tools are on.
    pub fn options(&self) -> Result<CatalogOptions, String> {
        let toolsets = match &self.toolsets {
            None => None,
            Some(sets) => Some(
                sets.iter()
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| Group::parse(s).map_err(|e| bad_config("LENSERFIGHT_TOOLSETS (--toolsets)", e)))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        Ok(CatalogOptions { toolsets, read_only: self.read_only, dynamic: false })
    }
}

/// The LenserFight MCP server over stdio.
#[derive(Parser, Debug, Clone)]
#[command(name = "lf-mcp-stdio", version, about, long_about = None)]
pub struct Args {
    #[command(flatten)]
    pub common: CommonArgs,

    /// The lenser (UUID) who owns what this server creates.
    #[arg(long, env = "LENSERFIGHT_LENSER_ID")]
    pub lenser_id: Option<String>,

    /// Microseconds to keep watching stdin after answering, before sleeping (0: sleep at once).
    #[arg(long, env = "LENSERFIGHT_LINGER_US", default_value_t = linger::DEFAULT_LINGER_US)]
    pub linger_us: u64,
}

/// The command line's defaults.
impl Default for Args {
    fn default() -> Self {
        Self { common: CommonArgs::default(), lenser_id: None, linger_us: linger::DEFAULT_LINGER_US }
    }
}

/// Validated configuration.
#[derive(Clone)]
pub struct Config {
    pub database_url: String,
    pub principal: Principal,
    pub options: CatalogOptions,
    /// The model provider (offline unless a model is configured).
    pub model: Arc<dyn ModelProvider>,
    /// How long to watch stdin before sleeping (see [`linger`]).
    pub linger: std::time::Duration,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("database_url", &lf_store::redact_url(&self.database_url))
            .field("principal", &self.principal)
            .field("options", &self.options)
            .field("model", &self.model.name())
            .field("linger", &self.linger)
            .finish()
    }
}

impl Config {
    /// Checks every setting; an error names the key.
    pub fn from_args(args: &Args) -> Result<Self, String> {
        let options = args.common.options()?;
        let acting_as = match args.lenser_id.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            None => None,
            Some(s) => Some(
                LenserId::parse("LENSERFIGHT_LENSER_ID", s)
                    .map_err(|e| bad_config("LENSERFIGHT_LENSER_ID (--lenser-id)", e.message()))?,
            ),
        };
        let database_url = args.common.database_url()?;
        let model = args.common.model_provider()?;
        if args.linger_us > linger::MAX_LINGER_US {
            return Err(bad_config(
                "LENSERFIGHT_LINGER_US (--linger-us)",
                format!("at most {} microseconds, got {}", linger::MAX_LINGER_US, args.linger_us),
            ));
        }
        let linger = std::time::Duration::from_micros(args.linger_us);
        Ok(Self { database_url, principal: Principal::Service { acting_as }, options, model, linger })
    }
}

/// Opens the database at `url`, applying migrations.
pub async fn open_database(url: &str) -> Result<Database, String> {
    Database::connect(url)
        .await
        .map_err(|e| bad_config("LENSERFIGHT_DATABASE_URL (--database-url)", e.message()))
}

/// Opens the database named by the configuration.
pub async fn open(config: &Config) -> Result<Database, String> {
    open_database(&config.database_url).await
}

/// The catalog's server over `db`, with these tools on, asking `model` for
/// model calls, calling as `principal`.
pub fn build_server(
    db: &Database,
    options: CatalogOptions,
    model: Arc<dyn ModelProvider>,
    principal: Principal,
) -> LfServer {
    let battles = lf_battle::BattleService::new(db.battle_store());
    let services =
        Services::builder().lens(LensService::new(db.lens_store())).battle(battles).model(model).build();
    LfServer::new(Arc::new(Catalog::new()), Arc::new(services), options, principal)
}

/// The catalog's server over `db`, as the configuration says.
pub fn server(config: &Config, db: &Database) -> LfServer {
    build_server(db, config.options.clone(), config.model.clone(), config.principal.clone())
}

/// Standard input and output as async streams. When they are pipes, as MCP
/// clients start servers, they are read and written as the runtime's own
/// non-blocking streams; otherwise (a terminal, a file) through tokio's
/// stdin and stdout, which hand every read and every write to another
/// thread: two thread switches per call, most of a sequential call's time
/// on one core.
pub fn std_streams() -> (Box<dyn AsyncRead + Send + Unpin>, Box<dyn AsyncWrite + Send + Unpin>) {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use tokio::net::unix::pipe;
        let reader = std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .and_then(pipe::Receiver::from_owned_fd)
            .map(|r| Box::new(r) as Box<dyn AsyncRead + Send + Unpin>);
        let writer = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .and_then(pipe::Sender::from_owned_fd)
            .map(|w| Box::new(w) as Box<dyn AsyncWrite + Send + Unpin>);
        (
            reader.unwrap_or_else(|_| Box::new(tokio::io::stdin())),
            writer.unwrap_or_else(|_| Box::new(tokio::io::stdout())),
        )
    }
    #[cfg(not(unix))]
    {
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    }
}

/// Serves one MCP session on `reader`/`writer` until the client closes it.
pub async fn serve<R, W>(server: LfServer, reader: R, writer: W) -> Result<(), String>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (transport, pump) = transport::lines(reader, writer, server.clone());
    let session = match server.serve(transport).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|reason| tracing::info!(?reason, "stdio session ended"))
            .map_err(|e| format!("MCP session ended with an error: {e}")),
        // A client that closes its input before initializing is not an error.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(format!("MCP session failed to start: {e}")),
    };
    pump.finish().await.map_err(|e| format!("writing to stdout failed: {e}"))?;
    session
}
