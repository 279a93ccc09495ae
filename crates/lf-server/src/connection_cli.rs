//! `connection add | list | remove`: the saved-connection commands of both
//! binaries, written once. `lf-mcp-stdio connection …` acts as the lenser
//! the stdio server acts as ([`AsLenser`]); `lf-mcp-http admin connection …`
//! names the lenser with `--handle` ([`ByHandle`]).
//!
//! The secret is read from standard input, never from an argument, so it
//! appears in no process list and no shell history; nothing here prints
//! it. Each command opens the database, acts, and closes it.

use std::future::Future;
use std::io::{Read, Write};
use std::sync::Arc;

use lf_auth::{AuthConfig, AuthService};
use lf_core::{LenserId, LfError, Principal, SystemClock};
use lf_store::Database;
use lf_workflow::connection::{MAX_SECRET_BYTES, MCP_PROVIDER};
use lf_workflow::{JsonObject, NewConnection, Secret};
use serde_json::Value;

use crate::config::CommonArgs;
use crate::sealer::KeySealer;
use crate::settings::{ConfigError, Setting};

/// Saved connections: the secrets and settings workflow steps use by ref.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum ConnectionCommand<O: ConnectionOwner> {
    /// Save a connection. Its secret (a token, a password, a webhook URL) is read from standard input: all of it, less one trailing newline.
    Add {
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        owner: O,
        /// What it connects to: one of the providers the node catalog uses (http, slack, discord, telegram, smtp, github).
        #[arg(long)]
        provider: String,
        /// The name workflow steps give it as connector.connection_ref (1 to 200 characters, unique per lenser).
        #[arg(long = "ref", value_name = "REF")]
        connection_ref: String,
        /// A setting that is not secret, as a string (repeat for more), e.g. --setting host=smtp.example.com
        #[arg(long = "setting", value_name = "KEY=VALUE")]
        settings: Vec<String>,
        /// Settings as one JSON object, for numbers and nested values, e.g. --settings '{"port": 587}'
        #[arg(long = "settings", value_name = "JSON")]
        settings_json: Option<String>,
    },
    /// List saved connections: refs, providers, when saved, settings. Never a secret.
    List {
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        owner: O,
    },
    /// Remove a saved connection and its secret.
    Remove {
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        owner: O,
        /// The connection's ref.
        #[arg(long = "ref", value_name = "REF")]
        connection_ref: String,
    },
}

impl<O: ConnectionOwner> ConnectionCommand<O> {
    pub fn common(&self) -> &CommonArgs {
        match self {
            Self::Add { common, .. } | Self::List { common, .. } | Self::Remove { common, .. } => common,
        }
    }

    pub fn common_mut(&mut self) -> &mut CommonArgs {
        match self {
            Self::Add { common, .. } | Self::List { common, .. } | Self::Remove { common, .. } => common,
        }
    }

    fn owner(&self) -> &O {
        match self {
            Self::Add { owner, .. } | Self::List { owner, .. } | Self::Remove { owner, .. } => owner,
        }
    }
}

/// Whose connections a command handles: the arguments that say so, and
/// the principal they name.
pub trait ConnectionOwner: clap::Args + clap::FromArgMatches + Clone + std::fmt::Debug {
    /// The principal the command acts as (a Service principal acting as
    /// that lenser).
    fn principal(
        &self,
        db: &Database,
        common: &CommonArgs,
    ) -> impl Future<Output = Result<Principal, CommandError>>;
}

/// `lf-mcp-stdio connection …`: the lenser the stdio server acts as,
/// `LENSERFIGHT_LENSER_ID` or else the database's local lenser.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AsLenser {
    /// The lenser (UUID) whose connections these are [default: the database's local lenser, as the stdio server acts as].
    #[arg(long, env = "LENSERFIGHT_LENSER_ID")]
    pub lenser_id: Option<String>,
}

impl ConnectionOwner for AsLenser {
    async fn principal(&self, db: &Database, common: &CommonArgs) -> Result<Principal, CommandError> {
        let id = match self.lenser_id.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => LenserId::parse("LENSERFIGHT_LENSER_ID", s)
                .map_err(|e| CommandError::Config(common.bad(Setting::LenserId, e.message())))?,
            None => crate::local_lenser(db).await.map_err(CommandError::Config)?.lenser.id,
        };
        Ok(Principal::Service { acting_as: Some(id) })
    }
}

/// `lf-mcp-http admin connection …`: the lenser with this handle.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ByHandle {
    /// Whose connections these are: a handle made with `admin create-lenser`.
    #[arg(long)]
    pub handle: String,
}

impl ConnectionOwner for ByHandle {
    async fn principal(&self, db: &Database, _: &CommonArgs) -> Result<Principal, CommandError> {
        let auth = AuthService::new(db.auth_store(), Arc::new(SystemClock), AuthConfig::default());
        let lenser = auth.find_lenser(self.handle.trim()).await.map_err(failed)?;
        let lenser = lenser
            .ok_or_else(|| CommandError::Failed(format!("no lenser has the handle {}", self.handle)))?;
        Ok(Principal::Service { acting_as: Some(lenser.id) })
    }
}

/// Why a connection command failed.
#[derive(Debug)]
pub enum CommandError {
    /// A setting (the database, the secret key, the lenser), naming it.
    Config(ConfigError),
    /// The command itself: what it says is for the operator.
    Failed(String),
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandError::Config(e) => e.fmt(f),
            CommandError::Failed(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for CommandError {}

fn failed(e: LfError) -> CommandError {
    CommandError::Failed(e.message().to_owned())
}

/// Runs one connection command; what it prints goes to `out`, the secret
/// of `add` comes from `input`.
pub async fn run_connection_command<O: ConnectionOwner>(
    command: ConnectionCommand<O>,
    input: &mut dyn Read,
    out: &mut dyn Write,
) -> Result<(), CommandError> {
    let common = command.common();
    let sealer = KeySealer::new(common.secret_key().map_err(CommandError::Config)?);
    let db = common.open_database().await.map_err(CommandError::Config)?;
    let result = run_on(&db, sealer, command, input, out).await;
    db.close().await;
    result
}

async fn run_on<O: ConnectionOwner>(
    db: &Database,
    sealer: KeySealer,
    command: ConnectionCommand<O>,
    input: &mut dyn Read,
    out: &mut dyn Write,
) -> Result<(), CommandError> {
    let principal = command.owner().principal(db, command.common()).await?;
    let io = |e: std::io::Error| CommandError::Failed(format!("cannot write the answer: {e}"));
    match command {
        ConnectionCommand::Add { provider, connection_ref, settings, settings_json, common, .. } => {
            let settings = parse_settings(&settings, settings_json.as_deref())?;
            // An outside MCP server may ask for no credentials.
            let secret = read_secret(input, provider.trim() == MCP_PROVIDER)?;
            // Read or make the key now, so that a problem with it names the file.
            sealer.key().map_err(CommandError::Config)?;
            let new = NewConnection { provider, connection_ref, settings, secret };
            let allow = common.egress_allow().map_err(CommandError::Config)?;
            let service = crate::connection_service(db, sealer).with_mcp(crate::mcp_servers(&allow));
            let saved = service.add(&principal, new).await.map_err(failed)?;
            writeln!(out, "saved connection {} ({})", shown(saved.connection_ref.as_str()), saved.provider)
                .map_err(io)?;
        }
        ConnectionCommand::List { .. } => {
            let list = crate::connection_service(db, sealer).list(&principal).await.map_err(failed)?;
            writeln!(out, "ref\tprovider\tcreated\tsettings").map_err(io)?;
            for c in list {
                let settings = Value::Object(c.settings);
                writeln!(
                    out,
                    "{}\t{}\t{}\t{settings}",
                    shown(c.connection_ref.as_str()),
                    c.provider,
                    c.created_at
                )
                .map_err(io)?;
            }
        }
        ConnectionCommand::Remove { connection_ref, .. } => {
            crate::connection_service(db, sealer)
                .remove(&principal, &connection_ref)
                .await
                .map_err(failed)?;
            writeln!(out, "removed connection {}", shown(connection_ref.trim())).map_err(io)?;
        }
    }
    Ok(())
}

/// A ref as one field of a tab-separated line: control characters escaped.
fn shown(r: &str) -> String {
    r.chars().flat_map(|c| if c.is_control() { c.escape_debug().collect() } else { vec![c] }).collect()
}

/// `--setting KEY=VALUE`s (strings) and `--settings JSON` (an object), one
/// object; a key given twice is refused.
fn parse_settings(pairs: &[String], json: Option<&str>) -> Result<JsonObject, CommandError> {
    let bad = |m: String| CommandError::Failed(m);
    let mut settings = match json.map(str::trim).filter(|j| !j.is_empty()) {
        None => JsonObject::new(),
        Some(j) => match serde_json::from_str::<Value>(j) {
            Ok(Value::Object(o)) => o,
            Ok(_) => return Err(bad("--settings must be a JSON object, e.g. '{\"port\": 587}'".into())),
            Err(e) => return Err(bad(format!("--settings is not JSON: {e}"))),
        },
    };
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(bad(format!(
                "--setting {} must be KEY=VALUE, e.g. --setting host=smtp.example.com",
                LfError::excerpt(pair)
            )));
        };
        let key = key.trim();
        if settings.insert(key.to_owned(), Value::String(value.to_owned())).is_some() {
            return Err(bad(format!("setting {} is given twice: give each key once", LfError::excerpt(key))));
        }
    }
    Ok(settings)
}

/// The secret on `input`: all of it, less one trailing newline (`\n` or
/// `\r\n`), at most [`MAX_SECRET_BYTES`].
fn read_secret(input: &mut dyn Read, may_be_empty: bool) -> Result<Secret, CommandError> {
    let mut bytes = Vec::new();
    input
        .take(MAX_SECRET_BYTES as u64 + 3)
        .read_to_end(&mut bytes)
        .map_err(|e| CommandError::Failed(format!("cannot read the secret from standard input: {e}")))?;
    if bytes.ends_with(b"\n") {
        bytes.pop();
        if bytes.ends_with(b"\r") {
            bytes.pop();
        }
    }
    if bytes.is_empty() && may_be_empty {
        return Ok(Secret::empty());
    }
    if bytes.is_empty() {
        return Err(CommandError::Failed(
            "give the connection's secret on standard input, e.g. printf '%s' \"$TOKEN\" | lf-mcp-stdio connection add --provider slack --ref team-slack".into(),
        ));
    }
    Secret::new(bytes).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_come_from_pairs_and_json() {
        let s = parse_settings(
            &["host=smtp.example.com".into(), "from=a=b@example.com".into()],
            Some("{\"port\": 587}"),
        )
        .unwrap();
        assert_eq!(
            Value::Object(s),
            serde_json::json!({"port": 587, "host": "smtp.example.com", "from": "a=b@example.com"})
        );
        let message = |r: Result<JsonObject, CommandError>| r.unwrap_err().to_string();
        assert!(message(parse_settings(&["host".into()], None)).contains("must be KEY=VALUE"));
        assert!(message(parse_settings(&["port=1".into()], Some("{\"port\": 2}"))).contains("given twice"));
        assert!(message(parse_settings(&[], Some("[1]"))).contains("must be a JSON object"));
        assert!(message(parse_settings(&[], Some("{"))).contains("is not JSON"));
    }

    #[test]
    fn the_secret_is_all_of_stdin_less_one_newline() {
        let read = |s: &[u8]| read_secret(&mut &s[..], false).map(|s| s.expose().to_vec());
        assert_eq!(read(b"xoxb-1\n").unwrap(), b"xoxb-1");
        assert_eq!(read(b"line one\nline two\r\n").unwrap(), b"line one\nline two");
        assert_eq!(read(b"keeps  \n\n").unwrap(), b"keeps  \n");
        assert!(read(b"\n").unwrap_err().to_string().contains("on standard input"));
        let huge = vec![b'x'; MAX_SECRET_BYTES + 10];
        assert!(read(&huge).unwrap_err().to_string().contains("must be 1 to"));
    }

    #[test]
    fn refs_print_on_one_line() {
        assert_eq!(shown("team-slack"), "team-slack");
        assert_eq!(shown("a\tb\nc"), "a\\tb\\nc");
    }
}
