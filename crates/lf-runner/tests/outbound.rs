//! The outbound executors against fakes on 127.0.0.1, one module per
//! family, and one run end to end through the `Runner`.
//!
//! No packet leaves loopback: every URL and SMTP host a test gives is
//! 127.0.0.1 (GitHub and Telegram are aimed at their fakes through the
//! saved connection's `base_url`), and the egress allow-list opens only
//! 127.0.0.1. The SSRF tests use a client without that entry and aim at a
//! fake's own port, so a refusal that let something through would show
//! in that fake's record.

#[path = "outbound/chat.rs"]
mod chat;
#[path = "outbound/email.rs"]
mod email;
#[path = "outbound/fakes.rs"]
mod fakes;
#[path = "outbound/feed.rs"]
mod feed;
#[path = "outbound/github.rs"]
mod github;
#[path = "outbound/http.rs"]
mod http;
#[path = "outbound/runner.rs"]
mod runner;
mod support;

use std::sync::Arc;
use std::time::Duration;

use lf_core::{LenserId, LfError, LfResult, Principal, Scopes};
use lf_egress::{Allow, Egress, EgressConfig};
use lf_runner::outbound::Outbound;
use lf_runner::{Executors, Job};
use lf_workflow::engine::Failure;
use lf_workflow::{
    ConnectionService, MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewConnection, SealBinding,
    SealedSecret, Secret, SecretSealer, WorkflowService,
};
use serde_json::{Value, json};

/// Not encryption: the secret behind its binding, which opens only for
/// that binding.
struct TestSealer;

impl SecretSealer for TestSealer {
    fn seal(&self, secret: &Secret, to: SealBinding<'_>) -> LfResult<SealedSecret> {
        Ok(SealedSecret::from_bytes([to.associated_data(), secret.expose().to_vec()].concat()))
    }

    fn open(&self, sealed: &SealedSecret, to: SealBinding<'_>) -> LfResult<Secret> {
        let clear = sealed.as_bytes().strip_prefix(to.associated_data().as_slice());
        Secret::new(clear.ok_or_else(|| LfError::invalid_argument("sealed for another connection"))?.to_vec())
    }
}

/// A client that may reach 127.0.0.1 and nothing else private.
fn loopback_egress() -> Egress {
    egress("127.0.0.1")
}

fn egress(allow: &str) -> Egress {
    let config = EgressConfig {
        allow: Allow::parse(allow).unwrap(),
        timeout: Duration::from_secs(10),
        ..EgressConfig::default()
    };
    Egress::new(config).expect("a client")
}

/// One owner with their workflows and saved connections, and the
/// outbound executors over them.
struct World {
    owner: LenserId,
    me: Principal,
    workflows: WorkflowService,
    connections: Arc<ConnectionService>,
    outbound: Outbound,
}

impl World {
    fn new() -> World {
        World::with(loopback_egress())
    }

    fn with(egress: Egress) -> World {
        let store = Arc::new(MemoryConnections::new());
        let connections = Arc::new(ConnectionService::new(store.clone(), Arc::new(TestSealer)));
        let workflows =
            WorkflowService::new(Arc::new(MemoryWorkflowStore::new()), Arc::new(MemoryLenses::new()), store);
        let owner = LenserId::new();
        World {
            owner,
            me: Principal::Lenser { id: owner, scopes: Scopes::READ_WRITE },
            workflows,
            outbound: Outbound::new(egress, connections.clone()),
            connections,
        }
    }

    /// Saves the connection `r` of `provider`.
    async fn connect(&self, provider: &str, r: &str, settings: Value, secret: &str) {
        let new = NewConnection {
            provider: provider.into(),
            connection_ref: r.into(),
            settings: settings.as_object().expect("settings are an object").clone(),
            secret: Secret::new(secret.as_bytes().to_vec()).unwrap(),
        };
        self.connections.add(&self.me, new).await.expect("saved");
    }

    /// The first attempt of the step `step` (of `node_type` with `config`,
    /// through the saved connection `connection` when given) in a new
    /// workflow after a manual trigger, on `input`.
    async fn job(&self, node_type: &str, config: Value, connection: Option<&str>, input: Value) -> Job {
        let mut step =
            json!({"key": "step", "kind": "tool", "name": "Step", "node_type": node_type, "config": config});
        if let Some(r) = connection {
            let provider = self.connections.list(&self.me).await.unwrap();
            let provider = provider.iter().find(|c| c.connection_ref.as_str() == r).expect("saved first");
            step["connector"] = json!({"provider": provider.provider.as_str(), "connection_ref": r});
        }
        support::first_attempt(&self.workflows, self.owner, step, input).await
    }

    /// Runs `job` with its type's outbound executor, as a runner does
    /// (what it gives back redacted of the connections it opened).
    async fn run(&self, job: &Job) -> Result<Value, Failure> {
        let t = &job.node().node_type;
        assert!(self.outbound.executor(t).is_some(), "{t} is outbound");
        let executors = self.outbound.clone().register(Executors::none());
        executors.execute(job).await.map(|done| done.output)
    }

    /// `job`'s failure, whose code must be `code`.
    async fn fails(&self, job: &Job, code: &str) -> Failure {
        let failure = self.run(job).await.expect_err("the step fails");
        assert_eq!(failure.code, code, "{failure:?}");
        failure
    }
}

/// The key a job of [`World::job`] carries.
fn key(job: &Job) -> String {
    job.idempotency_key.clone().expect("an outside effect is keyed")
}

/// The status mapping every HTTP type shares, checked on `job` against
/// `fake`: 429 `rate_limit`, 500 `status_5xx`, 400 `status_4xx` naming
/// the status and the start of the body.
async fn maps_statuses(w: &World, fake: &fakes::HttpFake, job: &Job) {
    use fakes::Reply;
    fake.answer(Reply::text(429, "slow down").with_header("retry-after", "7"));
    let f = w.fails(job, "rate_limit").await;
    assert!(f.message.contains("429") && f.message.contains("Retry-After: 7"), "{}", f.message);
    fake.answer(Reply::text(500, "boom"));
    assert!(w.fails(job, "status_5xx").await.message.contains("500"));
    fake.answer(Reply::json(400, json!({"error": "bad field"})));
    let f = w.fails(job, "status_4xx").await;
    assert!(f.message.contains("400 Bad Request") && f.message.contains("bad field"), "{}", f.message);
}
