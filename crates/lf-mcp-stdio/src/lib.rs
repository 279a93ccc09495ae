//! The LenserFight MCP server over stdio: newline-delimited JSON-RPC on a
//! reader and a writer (stdin and stdout in the binary, an in-process pipe in
//! tests). Nothing but JSON-RPC is ever written to the writer; logs go to
//! stderr. Calls run as the Service principal acting as
//! `LENSERFIGHT_LENSER_ID`, or, when it is unset, as the database's local
//! lenser, created on first start.
//!
//! This crate holds no domain logic and no wiring: lf-server parses the
//! configuration, opens the database and builds the catalog's [`LfServer`];
//! this crate adds the stdio settings and hands the server to rmcp over its
//! own line transport.

pub mod linger;
pub mod transport;

use clap::Parser;
use lf_core::{LenserId, Principal, Spawner};
use lf_server::{AsLenser, CommonArgs, ConfigError, ConnectionCommand, Database, Setting};
use lf_tools::LfServer;
use rmcp::ServiceExt;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

/// The LenserFight MCP server over stdio.
#[derive(Parser, Debug, Clone)]
#[command(name = "lf-mcp-stdio", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Args {
    /// Without one, the server serves MCP on stdin and stdout.
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub common: CommonArgs,

    /// The lenser (UUID) who owns what this server creates [default: the database's local lenser, created on first start].
    #[arg(long, env = "LENSERFIGHT_LENSER_ID")]
    pub lenser_id: Option<String>,

    /// Microseconds to keep watching stdin after answering, before sleeping (0: sleep at once).
    #[arg(long, env = "LENSERFIGHT_LINGER_US", default_value_t = linger::DEFAULT_LINGER_US)]
    pub linger_us: u64,

    /// A file to write the server's metrics to (Prometheus text format) when it exits [default: unset]
    #[arg(long, env = "LENSERFIGHT_METRICS_FILE", value_name = "PATH")]
    pub metrics_file: Option<std::path::PathBuf>,
}

/// What `lf-mcp-stdio` does besides serving.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum Command {
    /// Manage saved connections (the secrets workflow steps use by ref) of the lenser this server acts as.
    #[command(subcommand)]
    Connection(ConnectionCommand<AsLenser>),
}

/// The command line's defaults.
impl Default for Args {
    fn default() -> Self {
        Self {
            command: None,
            common: CommonArgs::default(),
            lenser_id: None,
            linger_us: linger::DEFAULT_LINGER_US,
            metrics_file: None,
        }
    }
}

impl lf_server::Arguments for Args {
    fn common_mut(&mut self) -> &mut CommonArgs {
        match &mut self.command {
            None => &mut self.common,
            Some(Command::Connection(c)) => c.common_mut(),
        }
    }
}

/// Validated configuration of the stdio server.
#[derive(Clone, Debug)]
pub struct StdioConfig {
    /// The settings both servers share.
    pub common: lf_server::Config,
    /// The lenser the server acts as; `None` until
    /// [`StdioConfig::act_as_local_lenser`] (the binary calls it), as nobody.
    pub lenser_id: Option<LenserId>,
    /// How long to watch stdin before sleeping (see [`linger`]).
    pub linger: std::time::Duration,
    /// Where the metrics are written on exit ([`write_metrics`]).
    pub metrics_file: Option<std::path::PathBuf>,
}

impl StdioConfig {
    /// Checks every setting; an error names the key.
    pub fn from_args(args: &Args) -> Result<Self, ConfigError> {
        // The order in which mistakes are reported: tools, lenser, the rest.
        args.common.options()?;
        let lenser_id = match args.lenser_id.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            None => None,
            Some(s) => Some(
                LenserId::parse("LENSERFIGHT_LENSER_ID", s)
                    .map_err(|e| args.common.bad(Setting::LenserId, e.message()))?,
            ),
        };
        let common = lf_server::Config::from_args(&args.common)?;
        if args.linger_us > linger::MAX_LINGER_US {
            return Err(args.common.bad(
                Setting::LingerUs,
                format!("at most {} microseconds, got {}", linger::MAX_LINGER_US, args.linger_us),
            ));
        }
        let linger = std::time::Duration::from_micros(args.linger_us);
        let metrics_file = args.metrics_file.clone().filter(|p| !p.as_os_str().is_empty());
        Ok(Self { common, lenser_id, linger, metrics_file })
    }

    /// The principal calls run as.
    pub fn principal(&self) -> Principal {
        Principal::Service { acting_as: self.lenser_id }
    }

    /// When no lenser is configured, acts as the database's local lenser
    /// from now on (created on first start, see [`lf_server::local_lenser`])
    /// and names it on stderr.
    pub async fn act_as_local_lenser(&mut self, db: &Database) -> Result<(), ConfigError> {
        if self.lenser_id.is_some() {
            return Ok(());
        }
        let local = lf_server::local_lenser(db).await?;
        let (id, handle) = (local.lenser.id, local.lenser.handle.as_str());
        if local.created {
            tracing::info!(lenser_id = %id, handle, "created the local lenser {handle} ({id}): what this server creates is theirs; set LENSERFIGHT_LENSER_ID to act as another lenser");
        } else {
            tracing::info!(lenser_id = %id, handle, "acting as the local lenser {handle} ({id}); set LENSERFIGHT_LENSER_ID to act as another lenser");
        }
        self.lenser_id = Some(id);
        Ok(())
    }
}

/// Opens the database named by the configuration.
pub async fn open(config: &StdioConfig) -> Result<Database, ConfigError> {
    lf_server::open_database(&config.common).await
}

/// The catalog's server over `db`, as the configuration says, starting
/// background work on `spawner`, and the workflow runner behind it.
pub fn server(config: &StdioConfig, db: &Database, spawner: Arc<dyn Spawner>) -> lf_server::Built {
    lf_server::build_server(
        db,
        config.common.model.clone(),
        spawner,
        config.common.options.clone(),
        config.principal(),
        config.common.sealer(),
        &config.common.runs,
    )
}

/// Writes the process's metrics to `path` (the Prometheus text format, as
/// `lf-mcp-http` serves them at `/metrics`), through a file beside it
/// renamed over it, so that a reader never sees half of them.
pub fn write_metrics(path: &std::path::Path) -> std::io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    std::fs::write(&partial, lf_metrics::metrics().render())?;
    std::fs::rename(&partial, path)
}

/// Why a session ended badly.
#[derive(Debug)]
pub enum SessionError {
    /// rmcp could not start the session.
    Start(Box<rmcp::service::ServerInitializeError>),
    /// The session's task failed.
    Ended(tokio::task::JoinError),
    /// An answer could not be written.
    Write(std::io::Error),
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::Start(e) => write!(f, "MCP session failed to start: {e}"),
            SessionError::Ended(e) => write!(f, "MCP session ended with an error: {e}"),
            SessionError::Write(e) => write!(f, "writing to stdout failed: {e}"),
        }
    }
}

impl std::error::Error for SessionError {}

/// Standard input and output as async streams. When they are pipes, as MCP
/// clients start servers, they are read and written as the runtime's own
/// non-blocking streams; otherwise (a terminal, a file) through tokio's
/// stdin and stdout, which hand every read and every write to another
/// thread (two thread switches per call).
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
pub async fn serve<R, W>(server: LfServer, reader: R, writer: W) -> Result<(), SessionError>
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
            .map_err(SessionError::Ended),
        // A client that closes its input before initializing is not an error.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(SessionError::Start(Box::new(e))),
    };
    pump.finish().await.map_err(SessionError::Write)?;
    session
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// Every argument is a setting of this binary under its one name (the
    /// configuration file's key is the argument's id), and every setting of
    /// this binary is an argument.
    #[test]
    fn the_arguments_are_the_stdio_settings() {
        lf_server::check_arguments(&Args::command(), lf_server::Reader::Stdio).unwrap();
    }
}
