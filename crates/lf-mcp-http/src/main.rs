//! `lf-mcp-http`: see the library's documentation.

use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};
use lf_mcp_http::admin::AdminCommand;
use lf_mcp_http::{HttpConfig, ServeArgs};

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

/// Start-up failures (configuration) exit 2, serving failures 1.
async fn serve(args: ServeArgs) -> Result<(), (u8, String)> {
    let config = HttpConfig::from_args(&args).map_err(|e| (2, e))?;
    let database = lf_store::redact_url(&config.database_url);
    let prepared = lf_mcp_http::prepare(config).await.map_err(|e| (2, e))?;
    let config = &prepared.state.config;
    tracing::info!(
        %database,
        bind = %config.bind,
        public_url = %config.public_url,
        sessions = config.sessions,
        "lenserfight HTTP server ready: MCP at {}/mcp",
        config.public_url
    );
    lf_mcp_http::serve(prepared, stop_signal()).await.map_err(|e| (1, e))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Serve(cli.serve));
    let common = match &command {
        Command::Serve(args) => &args.common,
        Command::Admin(admin) => admin.common(),
    };
    if let Err(e) = common.init_logs() {
        eprintln!("lf-mcp-http: {e}");
        return ExitCode::from(2);
    }
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
            runtime.block_on(lf_mcp_http::admin::run(admin, &mut input, &mut out)).map_err(|e| (1, e))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, e)) => {
            eprintln!("lf-mcp-http: {e}");
            ExitCode::from(code)
        }
    }
}
