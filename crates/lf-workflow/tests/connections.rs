//! The saved-connection use cases on the memory store: what a new
//! connection must be, whose it is, that listings never carry a secret,
//! that the sealer is handed the connection's binding, and that the
//! workflow service sees what is saved.

use std::sync::Arc;

use lf_core::{ErrorCode, LenserId, LfError, LfResult, Principal, Scopes};
use lf_workflow::{
    ConnectionService, IssueCode, MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewConnection,
    NewWorkflow, SealBinding, SealedSecret, Secret, SecretSealer, VersionSelector, WorkflowService,
};
use pollster::block_on;
use serde_json::json;

/// A stand-in for the composition root's cipher: not encryption. It keeps
/// the binding beside the reversed secret and refuses any other binding,
/// so these tests see what the service hands the sealer.
struct BindingSealer;

impl SecretSealer for BindingSealer {
    fn seal(&self, secret: &Secret, to: SealBinding<'_>) -> LfResult<SealedSecret> {
        let mut out = to.associated_data();
        out.push(0xff);
        out.extend(secret.expose().iter().rev());
        Ok(SealedSecret::from_bytes(out))
    }

    fn open(&self, sealed: &SealedSecret, to: SealBinding<'_>) -> LfResult<Secret> {
        let ad = to.associated_data();
        match sealed.as_bytes().strip_prefix(ad.as_slice()).and_then(|rest| rest.strip_prefix(&[0xff])) {
            Some(rest) => Secret::new(rest.iter().rev().copied().collect()),
            None => Err(LfError::invalid_argument("sealed for another connection")),
        }
    }
}

struct World {
    store: Arc<MemoryConnections>,
    service: ConnectionService,
    alice: Principal,
    alice_id: LenserId,
}

impl World {
    fn new() -> Self {
        let store = Arc::new(MemoryConnections::new());
        let service = ConnectionService::new(store.clone(), Arc::new(BindingSealer));
        let alice_id = LenserId::new();
        World {
            store,
            service,
            alice: Principal::Lenser { id: alice_id, scopes: Scopes::READ_WRITE },
            alice_id,
        }
    }

    fn add(&self, p: &Principal, provider: &str, r: &str, settings: serde_json::Value) -> LfResult<()> {
        let new = NewConnection {
            provider: provider.into(),
            connection_ref: r.into(),
            settings: settings.as_object().unwrap().clone(),
            secret: Secret::new(format!("secret of {r}").into_bytes()).unwrap(),
        };
        block_on(self.service.add(p, new)).map(drop)
    }
}

fn message(r: LfResult<()>) -> (ErrorCode, String) {
    let e = r.expect_err("refused");
    (e.code(), e.message().to_owned())
}

#[test]
fn a_connection_is_saved_listed_opened_and_removed() {
    let w = World::new();
    w.add(&w.alice, "smtp", "mail", json!({"host": "smtp.example.com", "port": 587})).unwrap();
    w.add(&w.alice, "slack", "alerts", json!({})).unwrap();
    let list = block_on(w.service.list(&w.alice)).unwrap();
    assert_eq!(list.iter().map(|c| c.connection_ref.as_str()).collect::<Vec<_>>(), ["alerts", "mail"]);
    assert_eq!(list[1].provider.as_str(), "smtp");
    assert_eq!(
        serde_json::Value::Object(list[1].settings.clone()),
        json!({"host": "smtp.example.com", "port": 587})
    );
    assert!(!format!("{list:?}").contains("secret of"), "a listing holds no secret");

    let (c, secret) = block_on(w.service.open_secret(w.alice_id, "mail")).unwrap();
    assert_eq!((c.connection_ref.as_str(), secret.expose_str().unwrap()), ("mail", "secret of mail"));
    let (_, stored) = block_on(lf_workflow::ConnectionStore::connection_secret(
        w.store.as_ref(),
        w.alice_id,
        &c.connection_ref,
    ))
    .unwrap();
    assert!(
        !stored.as_bytes().windows(14).any(|s| s == b"secret of mail"),
        "the store holds what the sealer made, not the secret"
    );

    block_on(w.service.remove(&w.alice, "mail")).unwrap();
    let (code, text) = message(block_on(w.service.remove(&w.alice, "mail")));
    assert_eq!(code, ErrorCode::NotFound);
    assert!(text.contains("\"mail\""), "{text}");
    assert_eq!(block_on(w.service.open_secret(w.alice_id, "mail")).unwrap_err().code(), ErrorCode::NotFound);
}

#[test]
fn the_secret_is_bound_to_its_connection() {
    let w = World::new();
    w.add(&w.alice, "github", "gh", json!({})).unwrap();
    w.add(&w.alice, "github", "gh2", json!({})).unwrap();
    // Swap the two sealed secrets in the store: neither opens as the other.
    let (c1, s1) = block_on(lf_workflow::ConnectionStore::connection_secret(
        w.store.as_ref(),
        w.alice_id,
        &lf_workflow::ConnectionRef::parse("ref", "gh").unwrap(),
    ))
    .unwrap();
    let gh2 = lf_workflow::ConnectionRef::parse("ref", "gh2").unwrap();
    let store: &dyn lf_workflow::ConnectionStore = w.store.as_ref();
    block_on(store.remove_connection(w.alice_id, &gh2)).unwrap();
    let moved = lf_workflow::Connection { connection_ref: gh2.clone(), ..c1 };
    block_on(store.add_connection(&moved, &s1)).unwrap();
    let e = block_on(w.service.open_secret(w.alice_id, "gh2")).unwrap_err();
    assert_eq!(e.message(), "sealed for another connection", "the sealer saw gh2's binding");
}

#[test]
fn bad_input_is_refused_whole() {
    let w = World::new();
    for (provider, r, settings, code, says) in [
        (
            "notion",
            "n",
            json!({}),
            ErrorCode::InvalidArgument,
            "provider must be one of discord, github, http",
        ),
        (
            "slack",
            "   ",
            json!({}),
            ErrorCode::InvalidArgument,
            "ref must be 1 to 200 characters long, got 0",
        ),
        ("slack", &"x".repeat(201), json!({}), ErrorCode::InvalidArgument, "ref must be 1 to 200 characters"),
        (
            "slack",
            "s",
            json!({"webhook": {"token": "t"}}),
            ErrorCode::InvalidArgument,
            "\"token\", a secret field",
        ),
        ("slack", "s", json!({"Channel": "#x"}), ErrorCode::InvalidArgument, "settings key \"Channel\""),
    ] {
        let (got, text) = message(w.add(&w.alice, provider, r, settings));
        assert_eq!(got, code, "{text}");
        assert!(text.contains(says), "{says:?} in {text:?}");
    }
    assert!(block_on(w.service.list(&w.alice)).unwrap().is_empty(), "nothing was written");

    w.add(&w.alice, "slack", "s", json!({})).unwrap();
    let (code, text) = message(w.add(&w.alice, "discord", "s", json!({})));
    assert_eq!(code, ErrorCode::Conflict);
    assert!(text.contains("\"s\"") && text.contains("connection remove --ref s"), "{text}");
    let list = block_on(w.service.list(&w.alice)).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].provider.as_str(), "slack", "the first one stays");

    let nobody = Principal::Service { acting_as: None };
    assert_eq!(message(w.add(&nobody, "slack", "x", json!({}))).0, ErrorCode::MissingLenser);
    assert_eq!(block_on(w.service.list(&nobody)).unwrap_err().code(), ErrorCode::MissingLenser);
}

#[test]
fn connections_are_their_owners_alone() {
    let w = World::new();
    w.add(&w.alice, "slack", "team", json!({})).unwrap();
    let bob_id = LenserId::new();
    let bob = Principal::Lenser { id: bob_id, scopes: Scopes::READ_WRITE };
    assert!(block_on(w.service.list(&bob)).unwrap().is_empty());
    assert_eq!(block_on(w.service.remove(&bob, "team")).unwrap_err().code(), ErrorCode::NotFound);
    w.add(&bob, "slack", "team", json!({})).expect("bob's own ref of the same name");
    // A service acting as alice sees alice's.
    let service = Principal::Service { acting_as: Some(w.alice_id) };
    assert_eq!(block_on(w.service.list(&service)).unwrap().len(), 1);
    let (_, s) = block_on(w.service.open_secret(bob_id, "team")).unwrap();
    assert_eq!(s.expose_str().unwrap(), "secret of team");
}

#[test]
fn the_workflow_service_sees_saved_connections() {
    let w = World::new();
    let workflows = WorkflowService::new(
        Arc::new(MemoryWorkflowStore::new()),
        Arc::new(MemoryLenses::new()),
        w.store.clone(),
    );
    let blueprint = || {
        serde_json::from_value(json!({
            "title": "Notify",
            "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "say", "kind": "tool", "name": "Say", "node_type": "slack_notify",
                 "config": {"text": "hello"},
                 "connector": {"provider": "slack", "connection_ref": "team-slack"}}
            ],
            "connections": [{"from_step": "start", "to_step": "say", "input_parameter": "input"}]
        }))
        .unwrap()
    };
    let refused = block_on(workflows.create(&w.alice, NewWorkflow { blueprint: blueprint(), owner: None }))
        .unwrap_err();
    assert!(refused.message().contains("\"team-slack\""), "{}", refused.message());

    w.add(&w.alice, "slack", "team-slack", json!({})).unwrap();
    let created =
        block_on(workflows.create(&w.alice, NewWorkflow { blueprint: blueprint(), owner: None })).unwrap();
    block_on(w.service.remove(&w.alice, "team-slack")).unwrap();
    let checked = block_on(workflows.validate(&w.alice, created.workflow.id, VersionSelector::Head)).unwrap();
    assert!(
        checked.report.errors.iter().any(|i| i.code == IssueCode::ConnectionUnknown),
        "a removed connection is unknown again: {:?}",
        checked.report.errors
    );
}
