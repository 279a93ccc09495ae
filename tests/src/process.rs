//! One server process over a database file, as the binaries wire it
//! (the offline model, no sealing key): a test opens several on one file,
//! one after the other, to see what outlives a restart.

use std::sync::Arc;

use lf_core::LenserId;
use lf_server::{Background, Database, KeySealer, RunSettings, Runner};
use lf_tools::{Catalog, CatalogOptions, LfServer};
use serde_json::Value;

use crate::{call, lenser};

/// The database, the catalog's server calling as one lenser, and the
/// workflow runner, which runs nothing until the test starts it.
pub struct Process {
    pub db: Database,
    pub server: LfServer,
    pub runner: Runner,
}

impl Process {
    /// The servers' wiring over the database at `url`, calling as `who`.
    pub async fn open(url: &str, who: LenserId) -> Process {
        let db = Database::connect(url).await.unwrap_or_else(|e| panic!("opening {url}: {e:?}"));
        let (services, runner) = lf_server::services(
            &db,
            Arc::new(lf_model::OfflineProvider),
            Background::new(tokio::runtime::Handle::current()),
            KeySealer::new(None),
            &RunSettings::default(),
        );
        let server =
            LfServer::new(Arc::new(Catalog::new()), services, CatalogOptions::default(), lenser(who));
        Process { db, server, runner }
    }

    /// Calls `tool`, which must succeed: its structured content.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let reply = call(self.server.clone(), tool, args).await.unwrap();
        assert!(!reply.is_error, "{tool}: {}", reply.value);
        reply.value
    }
}
