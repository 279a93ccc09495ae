//! The model-profile rules on the memory stores: what a profile must be
//! (nothing saved otherwise), whose it is, what a caller's model name
//! means, and the store contract.

use std::sync::Arc;

use lf_core::{ErrorCode, LenserId, LfError, PageRequest, Principal, Scopes};
use lf_workflow::profile::{
    Located, MemoryProfiles, NewProfile, OperatorEndpoint, Parameters, ProfileService, ProfileUpdate,
    ProfileView,
};
use lf_workflow::{
    Connection, ConnectionRef, ConnectionStore, EgressPolicy, EgressRefusal, MemoryConnections, Provider,
    SealedSecret,
};
use pollster::block_on;
use serde_json::json;

#[derive(Debug)]
struct NoLoopback;

impl EgressPolicy for NoLoopback {
    fn refusal(&self, url: &str) -> Option<EgressRefusal> {
        url.contains("127.0.0.1").then(|| EgressRefusal {
            reason: "loopback".into(),
            opened_by: Some("LENSERFIGHT_EGRESS_ALLOW=127.0.0.1".into()),
        })
    }
}

struct World {
    store: Arc<MemoryProfiles>,
    connections: Arc<MemoryConnections>,
    service: ProfileService,
}

fn world() -> World {
    let store = Arc::new(MemoryProfiles::new());
    let connections = Arc::new(MemoryConnections::new());
    let service = ProfileService::new(store.clone(), connections.clone())
        .with_operator(vec![OperatorEndpoint { name: "ollama".into(), model: Some("llama3.2".into()) }])
        .with_egress(Arc::new(NoLoopback));
    World { store, connections, service }
}

fn lenser() -> (LenserId, Principal) {
    let id = LenserId::new();
    (id, Principal::Lenser { id, scopes: Scopes::READ_WRITE })
}

fn new(name: &str, endpoint: &str) -> NewProfile {
    NewProfile {
        name: name.into(),
        endpoint: endpoint.into(),
        model: "gpt-4o-mini".into(),
        ..Default::default()
    }
}

fn connect(w: &World, owner: LenserId, r: &str, provider: &str, base_url: &str) {
    let c = Connection {
        owner,
        connection_ref: ConnectionRef::parse("ref", r).unwrap(),
        provider: Provider::parse("provider", provider).unwrap(),
        settings: json!({"base_url": base_url}).as_object().unwrap().clone(),
        created_at: lf_core::Timestamp::from_micros(0),
    };
    block_on(w.connections.add_connection(&c, &SealedSecret::from_bytes(b"sealed sk-live-123".to_vec())))
        .unwrap();
}

fn field(e: &LfError) -> Option<String> {
    e.details().iter().find(|(k, _)| k == "field").map(|(_, v)| format!("{v:?}"))
}

fn total(w: &World, p: &Principal) -> u64 {
    block_on(w.service.list(p, PageRequest::new(Some(100), None).unwrap())).unwrap().total
}

#[test]
fn the_store_contract_holds_in_memory() {
    block_on(lf_workflow::profile::contract::suite(Arc::new(MemoryProfiles::new())));
}

#[test]
fn bad_input_is_a_clear_error_and_nothing_is_saved() {
    let w = world();
    let (me, p) = lenser();
    connect(&w, me, "local", "openai_compatible", "http://127.0.0.1:9/v1");
    connect(&w, me, "hook", "http", "https://api.example.com/v1");
    let before = total(&w, &p);
    let cases: Vec<(NewProfile, ErrorCode, &str)> = vec![
        (new("a", "nowhere"), ErrorCode::NotFound, "endpoint"),
        (new("a", "connection:missing"), ErrorCode::NotFound, "endpoint"),
        (new("a", "connection:hook"), ErrorCode::NotFound, "endpoint"),
        (new("a", "connection:local"), ErrorCode::InvalidArgument, "endpoint"),
        (
            NewProfile { price_per_million_input: -1.0, ..new("a", "default") },
            ErrorCode::InvalidArgument,
            "price_per_million_input",
        ),
        (
            NewProfile { price_per_million_output: f64::INFINITY, ..new("a", "default") },
            ErrorCode::InvalidArgument,
            "price_per_million_output",
        ),
        (
            NewProfile {
                parameters: Parameters { temperature: Some(3.0), ..Default::default() },
                ..new("a", "default")
            },
            ErrorCode::InvalidArgument,
            "parameters",
        ),
        (
            NewProfile {
                parameters: Parameters { max_tokens: Some(0), ..Default::default() },
                ..new("a", "default")
            },
            ErrorCode::InvalidArgument,
            "parameters",
        ),
        (NewProfile { model: " ".into(), ..new("a", "default") }, ErrorCode::InvalidArgument, "model"),
        (new("has space", "default"), ErrorCode::InvalidArgument, "name"),
        (
            NewProfile { visibility: Some("community".into()), ..new("a", "default") },
            ErrorCode::InvalidArgument,
            "visibility",
        ),
    ];
    for (given, code, want) in cases {
        let e = block_on(w.service.create(&p, given.clone())).unwrap_err();
        assert_eq!(
            (e.code(), field(&e)),
            (code, Some(format!("Str({want:?})"))),
            "{given:?}: {}",
            e.message()
        );
        assert!(!e.message().contains("sk-live"), "{}", e.message());
    }
    let refused = block_on(w.service.create(&p, new("a", "connection:local"))).unwrap_err();
    assert!(
        refused.message().contains("egress guard") && refused.message().contains("LENSERFIGHT_EGRESS_ALLOW")
    );
    assert_eq!(total(&w, &p), before, "nothing saved");
}

#[test]
fn a_private_profile_is_its_owners_alone() {
    let w = world();
    let (me, p) = lenser();
    let (_, other) = lenser();
    connect(&w, me, "openai", "openai_compatible", "https://api.openai.com/v1");
    let mine = block_on(w.service.create(&p, new("cheap", "connection:openai"))).unwrap();
    let shared = block_on(
        w.service.create(&p, NewProfile { visibility: Some("public".into()), ..new("shared", "default") }),
    )
    .unwrap();

    // Another lenser: the private one does not exist, by id or by name.
    let by_id = block_on(w.service.locate(&other, "model", &mine.id.to_string())).unwrap_err();
    let nobody = lf_core::ModelProfileId::new().to_string();
    let missing = block_on(w.service.locate(&other, "model", &nobody)).unwrap_err();
    assert_eq!(by_id.code(), ErrorCode::NotFound);
    assert_eq!(
        by_id.message().replace(&mine.id.to_string(), "X"),
        missing.message().replace(&nobody, "X"),
        "no tell"
    );
    assert_eq!(
        block_on(w.service.locate(&other, "model", "cheap")).unwrap(),
        Located::Operator { endpoint: "default".into(), model: Some("cheap".into()) },
        "another's name is a bare model name"
    );
    let e = block_on(w.service.update(
        &other,
        mine.id,
        ProfileUpdate { model: Some("x".into()), ..Default::default() },
    ))
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    let listed = block_on(w.service.list(&other, PageRequest::new(Some(100), None).unwrap())).unwrap();
    assert!(!listed.items.iter().any(|v| matches!(v, ProfileView::Saved(s) if s.id == mine.id)));
    assert!(listed.items.iter().any(|v| matches!(v, ProfileView::Saved(s) if s.id == shared.id)));

    // A public one is read and used, changed by its owner only.
    assert_eq!(
        block_on(w.service.locate(&other, "model", &shared.id.to_string())).unwrap(),
        Located::Profile(shared.clone())
    );
    let e = block_on(w.service.archive(&other, shared.id, true)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden);

    // The owner names it; an update keeps what it does not name.
    assert_eq!(block_on(w.service.locate(&p, "model", " cheap ")).unwrap(), Located::Profile(mine.clone()));
    let up = block_on(w.service.update(
        &p,
        mine.id,
        ProfileUpdate { price_per_million_output: Some(0.6), ..Default::default() },
    ))
    .unwrap();
    assert_eq!((up.prices.per_million_output, up.model.as_str()), (0.6, "gpt-4o-mini"));
    let bad = block_on(w.service.update(
        &p,
        mine.id,
        ProfileUpdate { price_per_million_input: Some(-2.0), ..Default::default() },
    ));
    assert_eq!(bad.unwrap_err().code(), ErrorCode::InvalidArgument);
    assert_eq!(block_on(w.store_profile(&p, mine.id)).prices.per_million_input, 0.0, "nothing saved");
    assert_eq!(
        block_on(w.service.archive(&p, mine.id, false)).unwrap_err().code(),
        ErrorCode::ConfirmationRequired
    );
    block_on(w.service.archive(&p, mine.id, true)).unwrap();
    assert_eq!(
        block_on(w.service.locate(&p, "model", &mine.id.to_string())).unwrap_err().code(),
        ErrorCode::NotFound
    );
}

impl World {
    async fn store_profile(
        &self,
        p: &Principal,
        id: lf_core::ModelProfileId,
    ) -> lf_workflow::profile::ModelProfile {
        use lf_workflow::profile::ModelProfileStore;
        self.store.profile(p.reach(), id).await.unwrap().unwrap()
    }
}

#[test]
fn a_name_is_a_profile_then_an_operator_endpoint_then_a_model_on_default() {
    let w = world();
    let (_, p) = lenser();
    assert_eq!(
        block_on(w.service.locate(&p, "model", "ollama")).unwrap(),
        Located::Operator { endpoint: "ollama".into(), model: Some("llama3.2".into()) }
    );
    assert_eq!(
        block_on(w.service.locate(&p, "model", "gpt-4o")).unwrap(),
        Located::Operator { endpoint: "default".into(), model: Some("gpt-4o".into()) }
    );
    let ollama = &w.service.operator()[1];
    assert_eq!(
        block_on(w.service.locate(&p, "model", &ollama.profile_id().to_string())).unwrap(),
        Located::Operator { endpoint: "ollama".into(), model: Some("llama3.2".into()) }
    );
    let mine = block_on(w.service.create(&p, new("ollama", "ollama"))).unwrap();
    assert_eq!(block_on(w.service.locate(&p, "model", "ollama")).unwrap(), Located::Profile(mine));
    let page = block_on(w.service.list(&p, PageRequest::new(Some(1), Some(1)).unwrap())).unwrap();
    assert_eq!((page.items.len(), page.total), (1, 3));
    assert!(matches!(&page.items[0], ProfileView::Operator(o) if o.name == "ollama"));
    let page = block_on(w.service.list(&p, PageRequest::new(Some(5), Some(2)).unwrap())).unwrap();
    assert!(matches!(&page.items[..], [ProfileView::Saved(_)]));
}
