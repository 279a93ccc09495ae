//! Calling tools through `LfServer::call` and reading their results: shared
//! by the test files of this crate.

#[allow(dead_code, reason = "for the tests that speak JSON-RPC through rmcp")]
pub mod wire;

use lf_tools::LfServer;
use lf_workflow::engine::{NodeRun, RunState, Slot};
use lf_workflow::run::{RunId, RunStore};
use serde_json::Value;

pub fn args(v: Value) -> rmcp::model::JsonObject {
    v.as_object().unwrap().clone()
}

/// Calls `tool`: whether it answered an error, and its structured content
/// (checked to be mirrored as JSON text).
pub async fn call(s: &LfServer, tool: &str, v: Value) -> (bool, Value) {
    let r = s.call(tool, args(v)).await.expect("a known tool");
    let structured = r.structured_content.clone().expect("structured content");
    let text = r.content[0].as_text().expect("text").text.clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured, "text mirrors structuredContent");
    (r.is_error == Some(true), structured)
}

/// Calls `tool`, which must succeed.
pub async fn ok(s: &LfServer, tool: &str, v: Value) -> Value {
    let (err, out) = call(s, tool, v).await;
    assert!(!err, "{tool} failed: {out}");
    out
}

/// Calls `tool`, which must answer an error: its `{code, message, details}`.
pub async fn err(s: &LfServer, tool: &str, v: Value) -> Value {
    let (err, out) = call(s, tool, v).await;
    assert!(err, "{tool} should have failed: {out}");
    out
}

/// A workflow service on memory stores with no lens and no saved
/// connection: for tests of other groups, which need one to build
/// `Services`.
#[allow(dead_code, reason = "the Workflow tests build their own, over stores they read")]
pub fn memory_workflows() -> lf_workflow::WorkflowService {
    use std::sync::Arc;
    lf_workflow::WorkflowService::new(
        Arc::new(lf_workflow::MemoryWorkflowStore::new()),
        Arc::new(lf_workflow::MemoryLenses::new()),
        Arc::new(lf_workflow::MemoryConnections::new()),
    )
}

/// A sealer that seals and opens nothing: the catalog lists saved
/// connections but never handles a secret, and its tests save connections
/// straight into the store.
pub struct NoSecrets;

impl lf_workflow::SecretSealer for NoSecrets {
    fn seal(
        &self,
        _: &lf_workflow::Secret,
        _: lf_workflow::SealBinding<'_>,
    ) -> lf_core::LfResult<lf_workflow::SealedSecret> {
        Err(lf_core::LfError::permission_denied("the catalog's tests seal no secret"))
    }
    fn open(
        &self,
        _: &lf_workflow::SealedSecret,
        _: lf_workflow::SealBinding<'_>,
    ) -> lf_core::LfResult<lf_workflow::Secret> {
        Err(lf_core::LfError::permission_denied("the catalog's tests open no secret"))
    }
}

/// A connection service on a memory store with no saved connection.
#[allow(dead_code, reason = "the Workflow tests build their own, over a store they fill")]
pub fn memory_connections() -> lf_workflow::ConnectionService {
    use std::sync::Arc;
    lf_workflow::ConnectionService::new(Arc::new(lf_workflow::MemoryConnections::new()), Arc::new(NoSecrets))
}

/// Every service on fresh memory stores, with no lens, battle, workflow,
/// saved connection or run in them.
#[allow(dead_code, reason = "the tests that read their stores build their own")]
pub fn memory_services() -> lf_tools::Services {
    use std::sync::Arc;
    lf_tools::Services::builder()
        .lens(lf_lens::LensService::new(Arc::new(lf_lens::MemoryLensStore::new())))
        .battle(lf_battle::BattleService::new(Arc::new(lf_battle::MemoryBattleStore::new())))
        .workflow(memory_workflows())
        .connections(memory_connections())
        .build()
}

/// A workflow of `s`'s lenser at `visibility`, a manual trigger wired into
/// one `noop` step (it needs no lens and no saved connection): its id.
#[allow(dead_code, reason = "the tests of resources and search read workflows; others do not")]
pub async fn small_workflow(s: &LfServer, title: &str, visibility: &str) -> String {
    let made = ok(
        s,
        "create_workflow",
        serde_json::json!({
            "title": title, "visibility": visibility, "description": "Logs what it is given",
            "steps": [
                {"key": "start", "kind": "trigger", "name": "By hand", "node_type": "manual_trigger"},
                {"key": "log", "kind": "tool", "name": "Log it", "node_type": "noop"}
            ],
            "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]
        }),
    )
    .await;
    made["id"].as_str().expect("a workflow id").to_owned()
}

/// Alice and Bob on one set of memory stores.
#[allow(dead_code, reason = "for the tests of runs")]
pub struct World {
    pub services: std::sync::Arc<lf_tools::Services>,
    pub alice: lf_core::LenserId,
    pub bob: lf_core::LenserId,
}

#[allow(dead_code, reason = "for the tests of runs")]
impl World {
    pub fn new() -> Self {
        let services = std::sync::Arc::new(memory_services());
        World { services, alice: lf_core::LenserId::new(), bob: lf_core::LenserId::new() }
    }

    /// The server of every tool, for `principal`.
    pub fn server(&self, principal: lf_core::Principal) -> LfServer {
        self.server_with(principal, lf_tools::CatalogOptions::default())
    }

    /// The server `options` make, for `principal`.
    pub fn server_with(&self, principal: lf_core::Principal, options: lf_tools::CatalogOptions) -> LfServer {
        let catalog = std::sync::Arc::new(lf_tools::Catalog::new());
        LfServer::new(catalog, self.services.clone(), options, principal)
    }

    /// The server of every tool, for `who` with a read-write token.
    pub fn as_(&self, who: lf_core::LenserId) -> LfServer {
        self.server(lf_core::Principal::Lenser { id: who, scopes: lf_core::Scopes::READ_WRITE })
    }

    pub fn store(&self) -> &std::sync::Arc<dyn RunStore> {
        self.services.runs.store()
    }

    /// Records `state` with `slots` for run `id`, as its runner would:
    /// claims what is due, writes this run and gives the others back
    /// unchanged.
    pub async fn record(&self, id: &str, state: RunState, slots: Vec<(Slot, NodeRun)>) {
        let id = RunId::parse("run_id", id).unwrap();
        let now = lf_core::Timestamp::from_micros(i64::MAX / 2);
        let leases =
            self.store().claim("test", now, 60_000, &lf_workflow::run::Room::up_to(1_000)).await.unwrap();
        assert!(leases.iter().any(|l| l.run == id), "run {id} is not due");
        for lease in leases {
            let saved = if lease.run == id {
                self.store().save(&lease, &state, &slots, true).await
            } else {
                let other = self.store().load_run(lease.run).await.unwrap();
                self.store().save(&lease, &other.state, &[], true).await
            };
            assert!(saved.unwrap());
        }
    }
}
