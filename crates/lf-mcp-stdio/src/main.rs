//! `lf-mcp-stdio`: see the library's documentation.

use std::process::ExitCode;

// Every call allocates many short-lived strings and JSON values; mimalloc's
// thread-local free lists beat glibc's malloc here (see the stdio benchmark).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use lf_mcp_stdio::{Args, Command, SessionError, StdioConfig};
use lf_server::{Background, CommandError, ConfigError, SHUTDOWN_GRACE};

/// Why the server stopped badly: start-up failures (configuration) exit 2,
/// session and command failures 1.
enum Failure {
    Config(ConfigError),
    Session(SessionError),
    Command(String),
}

impl Failure {
    fn exit(self) -> ExitCode {
        let (code, message) = match self {
            Failure::Config(e) => (2, e.to_string()),
            Failure::Session(e) => (1, e.to_string()),
            Failure::Command(e) => (1, e),
        };
        eprintln!("lf-mcp-stdio: {message}");
        ExitCode::from(code)
    }
}

async fn run(mut config: StdioConfig) -> Result<(), Failure> {
    let db = lf_mcp_stdio::open(&config).await.map_err(Failure::Config)?;
    tracing::info!(database = %config.common.redacted_database_url(), "lenserfight stdio server ready");
    if let Err(e) = config.act_as_local_lenser(&db).await {
        db.close().await;
        return Err(Failure::Config(e));
    }
    let background = Background::current();
    let built = lf_mcp_stdio::server(&config, &db, background.clone());
    // Runs while the session is open, and resumes unfinished runs now.
    let runs = built.runner.start();
    built.ledger.start();
    let (stdin, stdout) = lf_mcp_stdio::std_streams();
    let result = lf_mcp_stdio::serve(built.server, stdin, stdout).await;
    // The client closed stdin: let running steps and background work
    // finish, then close the database. Runs left unfinished go on at the
    // next start.
    built.runner.shutdown().await;
    let _ = runs.await;
    background.shutdown(SHUTDOWN_GRACE).await;
    built.ledger.close().await;
    db.close().await;
    if let Some(path) = &config.metrics_file
        && lf_metrics::enabled()
        && let Err(e) = lf_mcp_stdio::write_metrics(path)
    {
        tracing::warn!(path = %path.display(), error = %e, "cannot write the metrics file");
    }
    result.map_err(Failure::Session)
}

/// `lf-mcp-stdio connection …`: one command, then exit.
fn run_command(command: Command) -> ExitCode {
    let Command::Connection(command) = command;
    // Declared before the runtime: dropped after it, it sends the last spans.
    let _traces = match command.common().init_logs() {
        Ok(traces) => traces,
        Err(e) => return Failure::Config(e).exit(),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lf-mcp-stdio: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut input = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    match runtime.block_on(lf_server::run_connection_command(command, &mut input, &mut out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CommandError::Config(e)) => Failure::Config(e).exit(),
        Err(CommandError::Failed(e)) => Failure::Command(e).exit(),
    }
}

fn main() -> ExitCode {
    let mut args: Args = match lf_server::parse() {
        Ok(args) => args,
        Err(e) => return Failure::Config(e).exit(),
    };
    if let Some(command) = args.command.take() {
        return run_command(command);
    }
    // Declared before the runtime: dropped after it, it sends the last spans.
    let _traces = match args.common.init_logs() {
        Ok(traces) => traces,
        Err(e) => return Failure::Config(e).exit(),
    };
    let config = match StdioConfig::from_args(&args) {
        Ok(c) => c,
        Err(e) => return Failure::Config(e).exit(),
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
        Err(failure) => failure.exit(),
    }
}
