//! `lf-mcp-http admin ...`: accounts, tokens and saved connections from the
//! command line (the connection commands are lf-server's, shared with
//! lf-mcp-stdio). A token is printed once, when it is issued; nothing else
//! ever prints one, and nothing prints a connection's secret.

use std::io::{BufRead, Write};
use std::time::Duration;

use lf_auth::{AuthConfig, AuthService, NewToken, TokenId};
use lf_core::{LfError, Scopes, SystemClock};
use lf_server::{ByHandle, CommandError, CommonArgs, ConnectionCommand};

/// Account and token administration.
#[derive(clap::Subcommand, Debug)]
pub enum AdminCommand {
    /// Create a lenser account. The password is read from standard input
    /// (one line), so it never appears in the process list.
    CreateLenser {
        #[command(flatten)]
        common: CommonArgs,
        /// The account's handle: 3 to 32 of a-z, 0-9 and _.
        #[arg(long)]
        handle: String,
    },
    /// Issue an access token and print it, once.
    IssueToken {
        #[command(flatten)]
        common: CommonArgs,
        /// Whose token.
        #[arg(long)]
        handle: String,
        /// read: Read tools only; write: every tool.
        #[arg(long, value_parser = ["read", "write"], default_value = "write")]
        scope: String,
        /// Days until it stops working [default: until revoked].
        #[arg(long)]
        expires_in_days: Option<u32>,
        /// A name to recognise it by in list-tokens.
        #[arg(long)]
        label: Option<String>,
    },
    /// Revoke an access token, or an OAuth grant with all its tokens, by its
    /// id (from list-tokens).
    RevokeToken {
        #[command(flatten)]
        common: CommonArgs,
        /// The token's or the grant's id.
        #[arg(long)]
        id: String,
    },
    /// List access tokens and OAuth grants (never the tokens themselves).
    ListTokens {
        #[command(flatten)]
        common: CommonArgs,
        /// Only this lenser's.
        #[arg(long)]
        handle: Option<String>,
        /// Also revoked and expired ones.
        #[arg(long)]
        all: bool,
    },
    /// Manage a lenser's saved connections (the secrets workflow steps use by ref).
    #[command(subcommand)]
    Connection(ConnectionCommand<ByHandle>),
}

impl AdminCommand {
    pub fn common(&self) -> &CommonArgs {
        match self {
            Self::CreateLenser { common, .. }
            | Self::IssueToken { common, .. }
            | Self::RevokeToken { common, .. }
            | Self::ListTokens { common, .. } => common,
            Self::Connection(c) => c.common(),
        }
    }

    pub fn common_mut(&mut self) -> &mut CommonArgs {
        match self {
            Self::CreateLenser { common, .. }
            | Self::IssueToken { common, .. }
            | Self::RevokeToken { common, .. }
            | Self::ListTokens { common, .. } => common,
            Self::Connection(c) => c.common_mut(),
        }
    }
}

/// Why an admin command failed: a setting or the database (naming the
/// setting), or the command itself (what it says is for the operator). The
/// connection commands' error, from lf-server.
pub type AdminError = CommandError;

fn failed(e: LfError) -> String {
    e.message().to_owned()
}

async fn lenser_id(auth: &AuthService, handle: &str) -> Result<lf_core::LenserId, String> {
    auth.find_lenser(handle)
        .await
        .map_err(failed)?
        .map(|l| l.id)
        .ok_or_else(|| format!("no lenser has the handle {handle}"))
}

/// Runs one admin command; what it prints goes to `out`, the password (or
/// a connection's secret) comes from `input`.
pub async fn run(
    command: AdminCommand,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), AdminError> {
    if let AdminCommand::Connection(c) = command {
        return lf_server::run_connection_command(c, input, out).await;
    }
    let db = command.common().open_database().await.map_err(AdminError::Config)?;
    // Admin tokens are valid for any resource of this server.
    let auth = AuthService::new(db.auth_store(), std::sync::Arc::new(SystemClock), AuthConfig::default());
    let result = run_on(&auth, command, input, out).await;
    db.close().await;
    result.map_err(AdminError::Failed)
}

async fn run_on(
    auth: &AuthService,
    command: AdminCommand,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("cannot write the answer: {e}");
    match command {
        AdminCommand::CreateLenser { handle, .. } => {
            let mut password = String::new();
            input
                .read_line(&mut password)
                .map_err(|e| format!("cannot read the password from stdin: {e}"))?;
            let password = password.trim_end_matches(['\r', '\n']);
            if password.is_empty() {
                return Err("give the password on standard input, e.g. printf '%s\\n' \"$PASSWORD\" | lf-mcp-http admin create-lenser --handle NAME".into());
            }
            let lenser = auth.create_lenser(&handle, password).await.map_err(failed)?;
            writeln!(out, "created lenser {} with id {}", lenser.handle, lenser.id).map_err(io)?;
        }
        AdminCommand::IssueToken { handle, scope, expires_in_days, label, .. } => {
            let lenser = lenser_id(auth, &handle).await?;
            let scopes = if scope == "read" { Scopes::READ } else { Scopes::READ_WRITE };
            let ttl = expires_in_days.map(|d| Duration::from_secs(u64::from(d) * 86_400));
            let issued = auth
                .issue_token(NewToken { lenser, scopes, resource: None, ttl, label })
                .await
                .map_err(failed)?;
            writeln!(out, "{}", issued.secret).map_err(io)?;
            eprintln!("token {} for {handle}: keep it secret; it is not shown again", issued.info.id);
        }
        AdminCommand::RevokeToken { id, .. } => {
            let id = TokenId::parse("id", id.trim()).map_err(failed)?;
            auth.revoke_token(id).await.map_err(failed)?;
            writeln!(out, "revoked {id}, and every token of its grant if it belongs to one").map_err(io)?;
        }
        AdminCommand::Connection(_) => unreachable!("run hands connection commands to lf-server"),
        AdminCommand::ListTokens { handle, all, .. } => {
            let lenser = match handle {
                Some(h) => Some(lenser_id(auth, &h).await?),
                None => None,
            };
            let tokens = auth.list_tokens(lenser, all).await.map_err(failed)?;
            let when = |t: Option<lf_core::Timestamp>| t.map_or_else(|| "-".to_owned(), |t| t.to_string());
            writeln!(out, "id\tlenser\tscope\tclient\tcreated\texpires\trevoked\tlabel").map_err(io)?;
            for t in tokens {
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    t.id,
                    t.lenser,
                    lf_auth::format_scope(t.scopes),
                    t.client_id.as_ref().map_or("-", |c| c.as_str()),
                    t.created_at,
                    when(t.expires_at),
                    when(t.revoked_at),
                    t.label.as_deref().unwrap_or("-"),
                )
                .map_err(io)?;
            }
            let grants = auth.list_grants(lenser, all).await.map_err(failed)?;
            writeln!(out, "\nOAuth grants (revoke-token --id GRANT ends one and every token of it):")
                .map_err(io)?;
            writeln!(out, "grant\tlenser\tscope\tclient\tcreated\tlast used\texpires\trevoked")
                .map_err(io)?;
            for g in grants {
                let name = auth.client(g.client_id.as_str()).await.map_err(failed)?.map(|c| c.name);
                writeln!(
                    out,
                    "{}\t{}\t{}\t{} ({})\t{}\t{}\t{}\t{}",
                    g.id,
                    g.lenser,
                    lf_auth::format_scope(g.scopes),
                    name.as_deref().unwrap_or("-"),
                    g.client_id,
                    g.created_at,
                    when(g.last_used_at),
                    g.expires_at,
                    when(g.revoked_at),
                )
                .map_err(io)?;
            }
        }
    }
    Ok(())
}
