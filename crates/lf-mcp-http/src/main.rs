//! `lf-mcp-http`: see the library's documentation.

use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};
use lf_mcp_http::admin::{AdminCommand, AdminError};
use lf_mcp_http::{HttpConfig, ServeArgs};
use lf_server::{CommonArgs, ConfigError};

/// The LenserFight MCP server over Streamable HTTP.
#[derive(Parser, Debug)]
#[command(name = "lf-mcp-http", version, about, long_about = None, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve MCP over HTTP (the default).
    Serve(ServeArgs),
    /// Manage accounts and tokens.
    #[command(subcommand)]
    Admin(AdminCommand),
}

impl lf_server::Arguments for Cli {
    fn common_mut(&mut self) -> &mut CommonArgs {
        match &mut self.command {
            None => &mut self.serve.common,
            Some(Command::Serve(args)) => &mut args.common,
            Some(Command::Admin(admin)) => admin.common_mut(),
        }
    }
}

/// Why the server stopped badly: start-up failures (configuration) exit 2,
/// admin failures 1.
enum Failure {
    Config(ConfigError),
    Admin(AdminError),
}

impl Failure {
    fn exit(self) -> ExitCode {
        let (code, message) = match self {
            Failure::Config(e) => (2, e.to_string()),
            Failure::Admin(e) => (1, e.to_string()),
        };
        eprintln!("lf-mcp-http: {message}");
        ExitCode::from(code)
    }
}

/// Resolves on SIGINT or SIGTERM.
async fn stop_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {},
        _ = terminate => {},
    }
    tracing::info!("stopping: finishing the requests in flight");
}

async fn serve(args: ServeArgs) -> Result<(), Failure> {
    let config = HttpConfig::from_args(&args).map_err(Failure::Config)?;
    let database = config.common.redacted_database_url();
    let prepared = lf_mcp_http::prepare(config).await.map_err(Failure::Config)?;
    let config = &prepared.state.config;
    tracing::info!(
        %database,
        bind = %config.bind,
        public_url = %config.public_url,
        sessions = config.sessions,
        "lenserfight HTTP server ready: MCP at {}/mcp",
        config.public_url
    );
    lf_mcp_http::serve(prepared, stop_signal()).await;
    Ok(())
}

fn main() -> ExitCode {
    let cli: Cli = match lf_server::parse() {
        Ok(cli) => cli,
        Err(e) => return Failure::Config(e).exit(),
    };
    let command = cli.command.unwrap_or(Command::Serve(cli.serve));
    let common = match &command {
        Command::Serve(args) => &args.common,
        Command::Admin(admin) => admin.common(),
    };
    // Declared before the runtime: dropped after it, it sends the last spans.
    let _traces = match common.init_logs() {
        Ok(traces) => traces,
        Err(e) => return Failure::Config(e).exit(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lf-mcp-http: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match command {
        Command::Serve(args) => runtime.block_on(serve(args)),
        Command::Admin(admin) => {
            let mut input = std::io::stdin().lock();
            let mut out = std::io::stdout().lock();
            runtime.block_on(lf_mcp_http::admin::run(admin, &mut input, &mut out)).map_err(Failure::Admin)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit(),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use lf_server::Setting;

    use super::*;

    /// Every argument of `serve` is a setting of this binary under its one
    /// name (the configuration file's key is the argument's id), and every
    /// setting of this binary is an argument.
    #[test]
    fn the_arguments_are_the_http_settings() {
        let command = Cli::command();
        let serve = command.find_subcommand("serve").unwrap();
        lf_server::check_arguments(serve, lf_server::Reader::Http).unwrap();
    }

    /// The configuration file reaches `serve` (given or not) and the admin
    /// commands, which must open the same database.
    #[test]
    fn every_command_reads_the_configuration_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lf.toml");
        std::fs::write(&file, "database_url = \"sqlite:/srv/lf.db\"\nbind = \"127.0.0.1:9999\"\n").unwrap();
        let config = file.to_str().unwrap();
        let parse = |args: &[&str]| lf_server::try_parse_from::<Cli>(args.iter().copied()).unwrap();
        for args in [&["lf-mcp-http", "--config", config][..], &["lf-mcp-http", "serve", "--config", config]]
        {
            let mut cli = parse(args);
            let common = lf_server::Arguments::common_mut(&mut cli).clone();
            assert_eq!(common.database_url.as_deref(), Some("sqlite:/srv/lf.db"), "{args:?}");
            assert!(common.from_file.file_of(Setting::Bind).is_some(), "{args:?}");
            let serve = match cli.command {
                Some(Command::Serve(serve)) => serve,
                _ => cli.serve,
            };
            assert_eq!(serve.bind, "127.0.0.1:9999", "{args:?}");
        }
        let mut cli = parse(&["lf-mcp-http", "admin", "list-tokens", "--config", config]);
        let common = lf_server::Arguments::common_mut(&mut cli);
        assert_eq!(common.database_url.as_deref(), Some("sqlite:/srv/lf.db"));
        assert_eq!(common.from_file.file_of(Setting::DatabaseUrl), Some(file.as_path()));
    }
}
