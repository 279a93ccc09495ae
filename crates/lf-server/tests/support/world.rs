//! The server's services on an in-memory SQLite database, their
//! `[[models]]` endpoints on the fake model server, with a runner; and a
//! catalog server for a lenser of them. Included with
//! `#[path = ...] mod world;` beside `fake_models`.

use std::sync::Arc;
use std::time::Duration;

use lf_core::{LenserId, Principal, Scopes};
use lf_model::{Endpoints, NamedEndpoint, RawEndpoint};
use lf_server::{Background, Database, KeySealer, RunSettings, SecretKey};
use lf_tools::{Catalog, CatalogOptions, Group, LfServer, Services};

use crate::fake_models::FakeModels;

pub struct World {
    pub services: Arc<Services>,
    runner: lf_server::Runner,
}

/// An operator's endpoint `name` on the fake: `concurrency` calls at once,
/// each given `timeout` seconds.
pub fn endpoint(fake: &FakeModels, name: &str, concurrency: u64, timeout: u64) -> NamedEndpoint {
    let raw = RawEndpoint {
        name: Some(name.into()),
        base_url: Some(fake.base_url()),
        concurrency: Some(concurrency),
        timeout: Some(timeout),
        ..RawEndpoint::default()
    };
    NamedEndpoint::parse(&raw, |_| None).unwrap()
}

impl World {
    /// The services with `endpoints`, the runner's leases lasting `lease`.
    pub async fn start(endpoints: Vec<NamedEndpoint>, lease: Duration) -> World {
        let db = Database::connect("sqlite::memory:").await.unwrap();
        let key = SecretKey::parse(&"ab".repeat(32)).unwrap();
        let endpoints = Endpoints::new(Arc::new(lf_model::OfflineProvider), None).with(endpoints).unwrap();
        let runs = RunSettings {
            egress_allow: lf_egress::Allow::parse("127.0.0.1").unwrap(),
            models: Some(Arc::new(endpoints)),
            runner: lf_runner::RunnerConfig { lease, ..Default::default() },
            ..RunSettings::default()
        };
        let (services, runner) = lf_server::services(
            &db,
            Arc::new(lf_model::OfflineProvider),
            Background::new(tokio::runtime::Handle::current()),
            KeySealer::new(Some(key)),
            &runs,
        );
        World { services, runner }
    }

    /// Starts the workflow runner (workflow runs are left waiting without).
    #[allow(dead_code)]
    pub fn run_workflows(&self) {
        self.runner.start();
    }

    /// A catalog server with every toolset, for lenser `who`.
    pub fn server(&self, who: LenserId) -> LfServer {
        let options =
            CatalogOptions { toolsets: Some(Group::parse_set(["all"]).unwrap()), ..Default::default() };
        let p = Principal::Lenser { id: who, scopes: Scopes::READ_WRITE };
        LfServer::new(Arc::new(Catalog::new()), self.services.clone(), options, p)
    }
}
