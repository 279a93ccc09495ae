//! Saved connections and workflows as the composition root wires them,
//! on a SQLite file: the connection commands, a secret opened under the
//! key it was saved with and refused under any other, and a
//! `WorkflowService` over the database that sees what is saved.

use std::sync::Arc;

use lf_core::{ErrorCode, LenserId, Principal};
use lf_server::{AsLenser, CommonArgs, ConnectionCommand, Database, KeySealer, KeyText, SecretKey};
use lf_workflow::{IssueCode, MemoryLenses, NewWorkflow, VersionSelector};
use serde_json::json;

const KEY_A: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

struct Fixture {
    _dir: tempfile::TempDir,
    url: String,
    lenser: LenserId,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("lf.db").display());
        Fixture { _dir: dir, url, lenser: LenserId::new() }
    }

    fn common(&self, key: &str) -> CommonArgs {
        CommonArgs {
            database_url: Some(self.url.clone()),
            secret_key: Some(KeyText(key.to_owned())),
            ..CommonArgs::default()
        }
    }

    fn owner(&self) -> AsLenser {
        AsLenser { lenser_id: Some(self.lenser.to_string()) }
    }

    /// `connection add` with `secret` on stdin: what it printed.
    async fn add(&self, key: &str, r: &str, secret: &str) -> String {
        let command = ConnectionCommand::Add {
            common: self.common(key),
            owner: self.owner(),
            provider: "slack".into(),
            connection_ref: r.into(),
            settings: vec!["channel=#ops".into()],
            settings_json: None,
        };
        let mut out = Vec::new();
        lf_server::run_connection_command(command, &mut secret.as_bytes(), &mut out).await.unwrap();
        String::from_utf8(out).unwrap()
    }
}

fn key(text: &str) -> KeySealer {
    KeySealer::new(Some(SecretKey::parse(text).unwrap()))
}

#[tokio::test]
async fn a_secret_opens_under_its_key_and_a_changed_key_is_a_clear_error() {
    let f = Fixture::new();
    assert_eq!(
        f.add(KEY_A, "team-slack", "https://hooks.example/T0/B0/abc\n").await,
        "saved connection team-slack (slack)\n"
    );

    let db = Database::connect(&f.url).await.unwrap();
    let (connection, secret) =
        lf_server::connection_service(&db, key(KEY_A)).open_secret(f.lenser, "team-slack").await.unwrap();
    assert_eq!(
        secret.expose_str().unwrap(),
        "https://hooks.example/T0/B0/abc",
        "one trailing newline dropped"
    );
    assert_eq!(connection.provider.as_str(), "slack");

    let other = SecretKey::generate().unwrap();
    let changed = lf_server::connection_service(&db, KeySealer::new(Some(other)));
    let e = changed.open_secret(f.lenser, "team-slack").await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Internal);
    assert_eq!(
        e.message(),
        "The secret of connection \"team-slack\" cannot be opened: it was saved under another secret key than this server's. Start the server with the key it was saved under (LENSERFIGHT_SECRET_KEY, or the key file of the data directory it was saved with), or save the connection again."
    );
    // The listing needs no key at all, and shows no secret.
    let listed = changed.list(&Principal::Service { acting_as: Some(f.lenser) }).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert!(!format!("{listed:?}").contains("hooks.example"));
    db.close().await;
}

#[tokio::test]
async fn the_workflow_service_over_the_database_sees_saved_connections() {
    let f = Fixture::new();
    let db = Database::connect(&f.url).await.unwrap();
    let workflows = lf_server::workflow_service(&db, Arc::new(MemoryLenses::new()));
    let me = Principal::Service { acting_as: Some(f.lenser) };
    let blueprint = || {
        serde_json::from_value(json!({
            "title": "Tell the team",
            "visibility": "unlisted",
            "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "say", "kind": "tool", "name": "Say", "node_type": "slack_notify",
                 "config": {"text": "Deployed: [[input]]"},
                 "connector": {"provider": "slack", "connection_ref": "team-slack"}}
            ],
            "connections": [{"from_step": "start", "to_step": "say", "input_parameter": "input"}]
        }))
        .unwrap()
    };
    let refused =
        workflows.create(&me, NewWorkflow { blueprint: blueprint(), owner: None }).await.unwrap_err();
    assert!(refused.message().contains("\"team-slack\""), "{}", refused.message());

    f.add(KEY_A, "team-slack", "secret").await;
    let created = workflows.create(&me, NewWorkflow { blueprint: blueprint(), owner: None }).await.unwrap();
    let checked = workflows.validate(&me, created.workflow.id, VersionSelector::Head).await.unwrap();
    assert!(checked.report.valid && checked.report.run_ready, "{:?}", checked.report.errors);

    // Stored in SQLite, read back whole by another lenser who has the id.
    let stranger = Principal::Lenser { id: LenserId::new(), scopes: lf_core::Scopes::READ };
    let graph = workflows.graph(&stranger, created.workflow.id, VersionSelector::Number(1)).await.unwrap();
    assert_eq!(graph.version.nodes.len(), 2);

    lf_server::connection_service(&db, key(KEY_A)).remove(&me, "team-slack").await.unwrap();
    let checked = workflows.validate(&me, created.workflow.id, VersionSelector::Head).await.unwrap();
    assert!(checked.report.errors.iter().any(|i| i.code == IssueCode::ConnectionUnknown));
    db.close().await;
}
