//! The SQL stores of LenserFight: the domain store traits
//! ([`lf_lens::LensStore`], [`lf_auth::AuthStore`], [`lf_battle::BattleStore`],
//! [`lf_workflow::WorkflowStore`], [`lf_workflow::ConnectionStore`],
//! [`lf_workflow::run::RunStore`], [`lf_workflow::kv::KvStore`],
//! [`lf_workflow::hook::WebhookStore`] and [`lf_agent::AgentStore`])
//! implemented with sqlx
//! over SQLite, the embedded default, and PostgreSQL, for several server
//! processes on one database.
//! [`Database::connect`] opens either from a `LENSERFIGHT_DATABASE_URL`,
//! applies the backend's migrations, and hands out the stores as trait
//! objects for the binaries to wire into the tool catalog.
//!
//! lf-store knows nothing about MCP, HTTP or JSON-RPC, and no domain rules
//! beyond each store trait's documented contract: what a lens version may
//! contain, who may change a lens, how versions are bumped are lf-lens's
//! business. Other crates see SQL only through the diagnostics pools
//! ([`Database::sqlite_pool`], [`Database::postgres_pool`]) and never an sqlx
//! error.
//!
//! Invariants:
//! - visibility is applied inside every read query (the caller's
//!   [`lf_core::Reach`] becomes part of its `WHERE` clause, and of the FTS5
//!   query on SQLite); no row is filtered in Rust after loading, and
//!   soft-deleted rows are never returned;
//! - SQL text is fixed at compile time or assembled from fixed fragments: user
//!   input only ever travels as bind parameters, and search terms are quoted
//!   so no backend reads them as query syntax;
//! - database errors are mapped once, in `error.rs` ([`map_db_err`] for
//!   sqlx's; rusqlite's on SQLite's direct path, told in sqlx's words, by
//!   the same function): a unique violation is CONFLICT, a missing row
//!   NOT_FOUND, anything else INTERNAL with the driver's error kept as its
//!   cause for logs and never shown to a client;
//! - a write of more than one statement runs in one transaction (on SQLite
//!   begun with `BEGIN IMMEDIATE`), so a store method happens whole or not at
//!   all, and the full-text index always matches the rows it indexes;
//! - consuming an authorization code and rotating a refresh token are one
//!   conditional `UPDATE … WHERE used_at IS NULL AND expires_at > now` plus
//!   the inserts of the new tokens, in one transaction: of concurrent calls
//!   exactly one wins; secrets are stored only as SHA-256 hashes;
//! - a battle write reads the battle's status first, its row locked (SQLite:
//!   by `BEGIN IMMEDIATE`; PostgreSQL: `SELECT … FOR UPDATE`), and checks
//!   what the caller expected in the same transaction: of concurrent writes
//!   that expect one state, exactly one passes;
//! - a workflow and its first version, or a new version and the head
//!   moving to it, are written in one transaction (a version whole: its row,
//!   its nodes, its edges), the head read under lock first (as a battle's
//!   status is) and compared with the one the caller expected;
//! - a saved connection's secret is stored only as the sealed bytes the
//!   domain hands over, and read back by one method only; a webhook's
//!   secret only as its SHA-256;
//! - a run is claimed, and its state saved, in one write transaction each:
//!   a claim locks what it picks (SQLite: `BEGIN IMMEDIATE`; PostgreSQL:
//!   `FOR UPDATE SKIP LOCKED`), so each due run goes to one caller with a
//!   new lease token, and a save writes only under the current token; a
//!   run made with an idempotency key is looked up and inserted under a
//!   lock (SQLite's write lock; a PostgreSQL advisory lock on workflow and
//!   key), so racing creations with one key make one run;
//! - a kv write and a rate-limit pass each count and write in one write
//!   transaction under a lock (SQLite's write lock; a PostgreSQL advisory
//!   lock on the owner or the bucket), so racing writers never pass an
//!   owner's entry bound or a window's limit together;
//! - an agent's writes lock its row first (SQLite: `BEGIN IMMEDIATE`;
//!   PostgreSQL: `SELECT … FOR NO KEY UPDATE`) and check what they expect
//!   (a revision, a count, the day's usage) under that lock: a
//!   `reserve_usage` reads the day's counts, checks every ask and writes
//!   them all or none, so racing calls never pass a cap together; creating
//!   an agent checks the owner's count and the handle among agents and
//!   lensers, and creating a lenser the handle among agents, under SQLite's
//!   write lock or PostgreSQL advisory locks on the owner and the handle,
//!   so a handle is one lenser's or one agent's;
//! - a lens label's change locks its lens (SQLite's write lock;
//!   PostgreSQL: `SELECT … FOR NO KEY UPDATE`), reads the label and its
//!   protection, writes it and records the move in one transaction, so of
//!   racing moves each starts where the one before ended;
//! - a throttle update reads, steps and writes its key's state in one
//!   write transaction (SQLite's write lock, which processes sharing the
//!   file take too; a PostgreSQL advisory lock on the key), so processes
//!   on one database count the edge's limits together;
//! - both backends pass the same contract suites
//!   ([`lf_lens::contract::suite`], [`lf_auth::contract::suite`],
//!   [`lf_auth::throttle::contract::suite`],
//!   [`lf_battle::contract::suite`], [`lf_workflow::contract::suite`],
//!   [`lf_workflow::connection::contract::suite`],
//!   [`lf_workflow::run::contract::suite`], [`lf_workflow::kv::contract::suite`],
//!   [`lf_workflow::hook::contract::suite`], [`lf_agent::contract::suite`]);
//!   migrations live per backend under `migrations/` and are never edited
//!   once released.
//!
//! Layout: one folder per domain (`lens/`, `auth/`, `battle/`,
//! `workflow/`, `connection/`, `run/`, `kv/`, `webhook/`, `agent/`,
//! `throttle/`), each a
//! store written once over both backends: `mod.rs` (the store type, over
//! `conns::Conns`, each method one line saying how it runs), `sql.rs` (the
//! statements and the functions that run them, generic over a connection of
//! either backend), `rows.rs` (decoding and binding rows). What the backends
//! spell differently is in `dialect.rs` (timestamps, lists of strings, and
//! statements written in both spellings); code of one backend only where its
//! SQL really differs: full-text search (`lens/search_sqlite.rs`,
//! `lens/search_postgres.rs`) and the statements SQLite runs on its direct
//! path, bypassing sqlx (`sqlite_direct.rs` in the lens, auth, battle and
//! agent folders). `sqlite/` and `postgres/` are each backend's connections
//! and how a store method runs on them; `sqlite/` (the only module that
//! names rusqlite) knows no store's statements. Imports run one way: lib.rs
//! over the stores, the stores over `conns.rs`, `page.rs` and `dialect.rs`,
//! those over the backends' modules, and `error.rs` and `backend.rs` under
//! all.
//!
//! Search ranks by relevance (bm25 on SQLite, ts_rank on PostgreSQL; title
//! weighs 10, description 4, body 1) among the 2,000 newest matches, and
//! lists older matches after them, newest first: ranking every match of a
//! common word costs more than a search may take. With fewer matches the
//! ranking is exact. `total` always counts every match.

mod agent;
mod ask;
mod auth;
mod backend;
mod battle;
mod connection;
mod conns;
mod dataset;
mod dialect;
mod error;
mod experiment;
mod kv;
mod lens;
mod location;
mod page;
mod postgres;
mod profile;
mod reach;
mod ready;
mod run;
mod sqlite;
mod throttle;
mod webhook;
mod workflow;

use std::sync::Arc;

use lf_agent::{AgentStore, LenserHandles};
use lf_auth::AuthStore;
use lf_battle::BattleStore;
use lf_core::{LfError, LfResult};
use lf_lens::LensStore;
use lf_workflow::hook::WebhookStore;
use lf_workflow::run::RunStore;
use lf_workflow::{ConnectionLookup, ConnectionStore, WorkflowStore};

use crate::conns::Conns;
pub use backend::Backend;
pub use error::map_db_err;
pub use location::{data_dir, default_database_url, redact_url};

/// An open, migrated database and the stores over it. Cheap to share behind
/// an `Arc`; the stores it hands out keep the connection pool alive.
pub struct Database {
    conns: Conns,
    lenses: Arc<dyn LensStore>,
    auth: Arc<dyn AuthStore>,
    battles: Arc<dyn BattleStore>,
}

impl Database {
    /// Opens the database named by `url` and brings its schema up to date.
    ///
    /// - `sqlite:PATH`, `sqlite://PATH` (`sqlite:///abs/path.db` for an
    ///   absolute path): a file, created with its parent directories when
    ///   missing. `sqlite::memory:` is a private in-memory database that lives
    ///   as long as this value, for tests.
    /// - `postgres://…` or `postgresql://…`: a PostgreSQL server (libpq-style
    ///   URL; this build has no TLS).
    ///
    /// Any other URL is INVALID_ARGUMENT naming `LENSERFIGHT_DATABASE_URL`. A
    /// database that cannot be opened or migrated is INTERNAL, its message
    /// meant for the operator starting the server.
    pub async fn connect(url: &str) -> LfResult<Database> {
        let scheme = url.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
        let conns = match scheme.as_deref() {
            Some("sqlite") => Conns::Sqlite(sqlite::Handle::open(url).await?),
            Some("postgres" | "postgresql") => Conns::Postgres(postgres::open(url).await?),
            _ => return Err(unsupported_url(url)),
        };
        Ok(Database {
            lenses: Arc::new(lens::SqlLensStore::new(conns.clone())),
            auth: Arc::new(auth::SqlAuthStore::new(conns.clone())),
            battles: Arc::new(battle::SqlBattleStore::new(conns.clone())),
            conns,
        })
    }

    pub fn backend(&self) -> Backend {
        match self.conns {
            Conns::Sqlite(_) => Backend::Sqlite,
            Conns::Postgres(_) => Backend::Postgres,
        }
    }

    /// The lens store over this database.
    pub fn lens_store(&self) -> Arc<dyn LensStore> {
        self.lenses.clone()
    }

    /// The store of accounts, access tokens and OAuth grants over this
    /// database, for an [`lf_auth::AuthService`].
    pub fn auth_store(&self) -> Arc<dyn AuthStore> {
        self.auth.clone()
    }

    /// The store of battles over this database, for an
    /// [`lf_battle::BattleService`].
    pub fn battle_store(&self) -> Arc<dyn BattleStore> {
        self.battles.clone()
    }

    /// The store of workflows and their versions over this database, for
    /// an [`lf_workflow::WorkflowService`]. (Made on each call: it holds
    /// nothing but the connections, and is asked for once, at wiring.)
    pub fn workflow_store(&self) -> Arc<dyn WorkflowStore> {
        Arc::new(workflow::SqlWorkflowStore::new(self.conns.clone()))
    }

    /// The store of saved connections and their sealed secrets over this
    /// database, for an [`lf_workflow::ConnectionService`].
    pub fn connection_store(&self) -> Arc<dyn ConnectionStore> {
        Arc::new(connection::SqlConnectionStore::new(self.conns.clone()))
    }

    /// The durable records of asking `ai_model` contenders' models.
    pub fn ask_store(&self) -> Arc<dyn lf_battle::AskStore> {
        Arc::new(ask::SqlAskStore::new(self.conns.clone()))
    }

    /// The store of model profiles over this database.
    pub fn profile_store(&self) -> Arc<dyn lf_workflow::profile::ModelProfileStore> {
        Arc::new(profile::SqlProfileStore::new(self.conns.clone()))
    }

    /// The store of datasets (their versions and cases) over this database.
    pub fn dataset_store(&self) -> Arc<dyn lf_eval::dataset::DatasetStore> {
        Arc::new(dataset::SqlDatasetStore::new(self.conns.clone()))
    }

    /// The store of experiments (their cells' leases and results) over this database.
    pub fn experiment_store(&self) -> Arc<dyn lf_eval::experiment::ExperimentStore> {
        Arc::new(experiment::SqlExperimentStore::new(self.conns.clone()))
    }

    /// The saved connections of [`Database::connection_store`], as the
    /// [`ConnectionLookup`] an [`lf_workflow::WorkflowService`] asks which
    /// connections are saved.
    pub fn connection_lookup(&self) -> Arc<dyn ConnectionLookup> {
        Arc::new(connection::SqlConnectionStore::new(self.conns.clone()))
    }

    /// The store of workflow runs, their node results and leases over
    /// this database, for the runner.
    pub fn run_store(&self) -> Arc<dyn RunStore> {
        Arc::new(run::SqlRunStore::new(self.conns.clone()))
    }

    /// The per-owner entries and rate-limit windows of workflow steps
    /// over this database, for the runner's kv, cache and rate_limit steps.
    pub fn kv_store(&self) -> Arc<dyn lf_workflow::kv::KvStore> {
        Arc::new(kv::SqlKvStore::new(self.conns.clone()))
    }

    /// The store of workflows' webhook secrets (their hashes) over this
    /// database, for an [`lf_workflow::WorkflowService`].
    pub fn webhook_store(&self) -> Arc<dyn WebhookStore> {
        Arc::new(webhook::SqlWebhookStore::new(self.conns.clone()))
    }

    /// The store of AI Lensers (agents, their members, grants, daily
    /// usage, action log and team runs) over this database, for an
    /// [`lf_agent::AgentService`].
    pub fn agent_store(&self) -> Arc<dyn AgentStore> {
        Arc::new(agent::SqlAgentStore::new(self.conns.clone()))
    }

    /// The HTTP edge's rate limits and sign-in lockouts over this
    /// database, shared by every process serving it, for the HTTP
    /// transport's limits.
    pub fn throttle_store(&self) -> Arc<dyn lf_auth::ThrottleStore> {
        Arc::new(throttle::SqlThrottleStore::new(self.conns.clone()))
    }

    /// Whether a lenser (an account of [`Database::auth_store`]) holds a
    /// handle, for an [`lf_agent::AgentService`]: lensers and agents share
    /// one namespace of handles. (Creating an agent in
    /// [`Database::agent_store`] also refuses a lenser's handle, and
    /// creating a lenser an agent's, each checked in its write
    /// transaction.)
    pub fn lenser_handles(&self) -> Arc<dyn LenserHandles> {
        Arc::new(agent::SqlLenserHandles::new(self.conns.clone()))
    }

    /// A small pool of separate connections to the SQLite database, for
    /// diagnostics and tests: they see what the stores committed. Writes
    /// through it bypass the stores' invariants (and their write turn).
    pub fn sqlite_pool(&self) -> Option<&sqlx::SqlitePool> {
        match &self.conns {
            Conns::Sqlite(h) => Some(h.diagnostics_pool()),
            Conns::Postgres(_) => None,
        }
    }

    /// The PostgreSQL connection pool, for diagnostics and tests. Writes
    /// through it bypass the stores' invariants.
    pub fn postgres_pool(&self) -> Option<&sqlx::PgPool> {
        match &self.conns {
            Conns::Postgres(p) => Some(p),
            Conns::Sqlite(_) => None,
        }
    }

    /// Whether this database serves now: it answers a connection of its
    /// own (SQLite: a new one, so a file gone or unreadable shows), within
    /// two seconds, and its migrations are exactly this build's. Else why
    /// not, in a few words fit for a readiness probe (never the URL).
    pub async fn ready(&self) -> Result<(), String> {
        let check = async {
            match &self.conns {
                Conns::Sqlite(h) => h.ready().await,
                Conns::Postgres(p) => postgres::ready(p).await,
            }
        };
        match tokio::time::timeout(ready::READY_TIMEOUT, check).await {
            Ok(r) => r,
            Err(_) => Err("the database did not answer within 2 s".into()),
        }
    }

    /// Waits for checked-out connections to come back and closes them all.
    /// Stores handed out earlier fail from then on.
    pub async fn close(&self) {
        match &self.conns {
            Conns::Sqlite(h) => h.close().await,
            Conns::Postgres(p) => p.close().await,
        }
    }
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the URL: it may carry a password.
        f.debug_struct("Database").field("backend", &self.backend()).finish_non_exhaustive()
    }
}

fn unsupported_url(url: &str) -> LfError {
    // Only the scheme is echoed: the rest of a URL may carry a password.
    let shown = match url.split_once("://").or_else(|| url.split_once(':')) {
        Some((scheme, _)) => format!("a URL with scheme {}", LfError::excerpt(scheme)),
        None if url.is_empty() => "an empty value".to_owned(),
        None => "a value that is not a URL".to_owned(),
    };
    LfError::invalid_argument(format!(
        "LENSERFIGHT_DATABASE_URL must be sqlite:PATH (e.g. sqlite:///var/lib/lenserfight/lenserfight.db) \
         or postgres://USER@HOST:PORT/DATABASE; got {shown}"
    ))
    .with_field("LENSERFIGHT_DATABASE_URL")
}

#[cfg(test)]
mod tests {
    use super::*;
    use lf_core::ErrorCode;

    #[test]
    fn unsupported_urls_name_the_setting_but_never_echo_credentials() {
        for url in ["mysql://root:hunter2@db/lf", "", "lenserfight.db", "http://x", "file:x.db"] {
            let err = unsupported_url(url);
            assert_eq!(err.code(), ErrorCode::InvalidArgument);
            assert!(err.message().contains("LENSERFIGHT_DATABASE_URL"), "{}", err.message());
            assert!(!err.message().contains("hunter2"));
        }
    }
}
