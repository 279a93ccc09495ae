//! `lf-mcp-stdio`: see the library's documentation.

use std::process::ExitCode;

// Every call allocates many short-lived strings and JSON values; mimalloc's
// thread-local free lists beat glibc's malloc here (see the stdio benchmark).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use lf_core::Principal;
use lf_mcp_stdio::{Args, Config};

/// Start-up failures (configuration) exit 2, session failures 1.
async fn run(config: Config) -> Result<(), (u8, String)> {
    let db = lf_mcp_stdio::open(&config).await.map_err(|e| (2, e))?;
    tracing::info!(database = %lf_store::redact_url(&config.database_url), "lenserfight stdio server ready");
    if let Principal::Service { acting_as: None } = config.principal {
        tracing::warn!(
            "LENSERFIGHT_LENSER_ID is not set: tools that create lenses will answer MISSING_LENSER"
        );
    }
    let server = lf_mcp_stdio::server(&config, &db);
    let (stdin, stdout) = lf_mcp_stdio::std_streams();
    let result = lf_mcp_stdio::serve(server, stdin, stdout).await;
    db.close().await;
    result.map_err(|e| (1, e))
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(e) = args.common.init_logs() {
        eprintln!("lf-mcp-stdio: {e}");
        return ExitCode::from(2);
    }
    let config = match Config::from_args(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("lf-mcp-stdio: {e}");
            return ExitCode::from(2);
        }
    };
    // One thread for the protocol: the database driver has its own threads.
    let runtime = match lf_mcp_stdio::linger::runtime(config.linger) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lf-mcp-stdio: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, e)) => {
            eprintln!("lf-mcp-stdio: {e}");
            ExitCode::from(code)
        }
    }
}
