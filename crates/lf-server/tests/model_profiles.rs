//! Model profiles as the composition root wires them, over SQLite: the
//! Model tools listed only when asked for, bad input refused with nothing
//! saved, the egress guard on a connection's base URL, another lenser
//! unable to read, use or infer a private profile, a connection's secret in
//! no answer or error, and ai_judge_model_key read through the resolver.

use std::sync::Arc;

use lf_core::{LenserId, Principal, Scopes};
use lf_server::{Background, Database, KeySealer, RunSettings, SecretKey};
use lf_tools::{Catalog, CatalogOptions, Group, LfServer, Services};
use lf_workflow::{NewConnection, Secret};
use serde_json::{Value, json};

const SECRET: &str = "sk-live-SECRET-4242";

struct World {
    services: Arc<Services>,
    _runner: lf_server::Runner,
}

async fn world() -> World {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    let key = SecretKey::parse(&"ab".repeat(32)).unwrap();
    let (services, runner) = lf_server::services(
        &db,
        Arc::new(lf_model::OfflineProvider),
        Background::new(tokio::runtime::Handle::current()),
        KeySealer::new(Some(key)),
        &RunSettings::default(),
    );
    World { services, _runner: runner }
}

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

impl World {
    fn server(&self, who: LenserId, options: CatalogOptions) -> LfServer {
        LfServer::new(Arc::new(Catalog::new()), self.services.clone(), options, lenser(who))
    }

    fn all(&self, who: LenserId) -> LfServer {
        self.server(
            who,
            CatalogOptions { toolsets: Some(Group::parse_set(["all"]).unwrap()), ..Default::default() },
        )
    }

    async fn connect(&self, owner: LenserId, r: &str, base_url: &str) {
        let new = NewConnection {
            provider: "openai_compatible".into(),
            connection_ref: r.into(),
            settings: json!({"base_url": base_url}).as_object().unwrap().clone(),
            secret: Secret::new(SECRET.as_bytes().to_vec()).unwrap(),
        };
        self.services.connections.add(&lenser(owner), new).await.unwrap();
    }
}

/// Calls `tool`: whether it failed, and its answer, which never holds the
/// connection's secret.
async fn call(s: &LfServer, tool: &str, args: Value) -> (bool, Value) {
    let r = s.call(tool, args.as_object().unwrap().clone()).await.expect("a known tool");
    let out = r.structured_content.clone().unwrap();
    assert!(!out.to_string().contains(SECRET), "{tool}: {out}");
    (r.is_error == Some(true), out)
}

async fn ok(s: &LfServer, tool: &str, args: Value) -> Value {
    let (failed, out) = call(s, tool, args).await;
    assert!(!failed, "{tool}: {out}");
    out
}

async fn err(s: &LfServer, tool: &str, args: Value) -> Value {
    let (failed, out) = call(s, tool, args).await;
    assert!(failed, "{tool} should fail: {out}");
    out
}

fn names(s: &LfServer) -> Vec<String> {
    s.listing(&[]).iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn the_model_tools_are_listed_only_when_asked_for() {
    let w = world().await;
    let me = LenserId::new();
    let plain = w.server(me, CatalogOptions::default());
    assert!(!names(&plain).iter().any(|n| n.contains("model_profile")), "not in the default listing");
    assert!(names(&plain).contains(&"create_battle".to_owned()));
    assert!(plain.call("list_model_profiles", Default::default()).await.is_err(), "nor callable");

    let model_tools =
        ["list_model_profiles", "create_model_profile", "update_model_profile", "archive_model_profile"];
    let all = names(&w.all(me));
    assert!(
        model_tools.iter().all(|t| all.contains(&t.to_string())) && all.contains(&"create_battle".to_owned())
    );
    let named = w.server(
        me,
        CatalogOptions {
            toolsets: Some(Group::parse_set(["default,model,eval,connections"]).unwrap()),
            ..Default::default()
        },
    );
    assert_eq!(names(&named), all);

    let dynamic = w.server(me, CatalogOptions { dynamic: true, ..Default::default() });
    let sets = ok(&dynamic, "list_toolsets", json!({})).await;
    assert!(sets["toolsets"].as_array().unwrap().iter().any(|g| g["id"] == "model" && g["enabled"] == false));
    ok(&dynamic, "enable_toolset", json!({"toolset": "model"})).await;
    assert!(model_tools.iter().all(|t| names(&dynamic).contains(&t.to_string())));
    ok(&dynamic, "list_model_profiles", json!({})).await;
}

#[tokio::test]
async fn bad_input_is_a_clear_error_and_nothing_is_saved() {
    let w = world().await;
    let me = LenserId::new();
    let s = w.all(me);
    w.connect(me, "local", "http://127.0.0.1:9/v1").await;
    let before = ok(&s, "list_model_profiles", json!({})).await["total"].clone();
    let good = json!({"name": "cheap", "model": "gpt-4o-mini"});
    let with = |extra: Value| {
        let mut v = good.clone();
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    let cases = [
        (with(json!({"endpoint": "nowhere"})), "NOT_FOUND", "endpoint"),
        (with(json!({"endpoint": "connection:missing"})), "NOT_FOUND", "endpoint"),
        (with(json!({"endpoint": "connection:local"})), "INVALID_ARGUMENT", "endpoint"),
        (with(json!({"price_per_million_input": -1})), "INVALID_ARGUMENT", "price_per_million_input"),
        (with(json!({"price_per_million_output": -0.5})), "INVALID_ARGUMENT", "price_per_million_output"),
        (with(json!({"parameters": {"temperature": 3}})), "INVALID_ARGUMENT", "parameters"),
        (with(json!({"parameters": {"top_p": 0}})), "INVALID_ARGUMENT", "parameters"),
        (with(json!({"parameters": {"max_tokens": 0}})), "INVALID_ARGUMENT", "parameters"),
        (with(json!({"parameters": {"stop": ["a", "b", "c", "d", "e"]}})), "INVALID_ARGUMENT", "parameters"),
        (with(json!({"name": "two words"})), "INVALID_ARGUMENT", "name"),
    ];
    for (args, code, field) in cases {
        let e = err(&s, "create_model_profile", args.clone()).await;
        assert_eq!(
            (e["code"].as_str(), e["details"]["field"].as_str()),
            (Some(code), Some(field)),
            "{args}: {e}"
        );
    }
    let refused = err(&s, "create_model_profile", with(json!({"endpoint": "connection:local"}))).await;
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("egress guard") && message.contains("loopback"), "{message}");
    assert_eq!(ok(&s, "list_model_profiles", json!({})).await["total"], before, "nothing saved");
    let unknown = json!({"profile_id": LenserId::new().to_string(), "model": "x"});
    assert_eq!(err(&s, "update_model_profile", unknown).await["code"], "NOT_FOUND");
}

#[tokio::test]
async fn another_lenser_cannot_read_use_or_infer_a_private_profile() {
    let w = world().await;
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let (a, b) = (w.all(alice), w.all(bob));
    w.connect(alice, "openai", "https://api.openai.com/v1").await;
    let made = ok(
        &a,
        "create_model_profile",
        json!({"name": "cheap", "endpoint": "connection:openai", "model": "gpt-4o-mini",
               "parameters": {"temperature": 0.2, "stop": ["END"]}, "price_per_million_input": 0.15, "price_per_million_output": 0.6}),
    )
    .await;
    let id = made["profile_id"].as_str().unwrap().to_owned();
    assert_eq!(
        (made["endpoint"].as_str(), made["visibility"].as_str()),
        (Some("connection:openai"), Some("private"))
    );

    let listed = ok(&b, "list_model_profiles", json!({})).await;
    assert!(!listed.to_string().contains(&id), "{listed}");
    let nobody = LenserId::new().to_string();
    for (tool, extra) in
        [("update_model_profile", json!({"model": "x"})), ("archive_model_profile", json!({"confirm": true}))]
    {
        let mut args = extra.clone();
        args["profile_id"] = json!(id);
        let theirs = err(&b, tool, args.clone()).await;
        args["profile_id"] = json!(nobody);
        let missing = err(&b, tool, args).await;
        assert_eq!(theirs["code"], "NOT_FOUND");
        assert_eq!(
            theirs["message"].as_str().unwrap().replace(&id, "X"),
            missing["message"].as_str().unwrap().replace(&nobody, "X")
        );
    }

    // A battle's judge: her profile's name or id for her, nothing for him.
    let battle = |key: &str| json!({"title": "Haiku", "task_prompt": "Write a haiku.", "judging_mode": "ai_judge", "ai_judge_model_key": key});
    ok(&a, "create_battle", battle("cheap")).await;
    ok(&a, "create_battle", battle(&id)).await;
    ok(&b, "create_battle", battle("cheap")).await; // his "cheap": a bare model name on default
    let theirs = err(&b, "create_battle", battle(&id)).await;
    let missing = err(&b, "create_battle", battle(&nobody)).await;
    assert_eq!(
        (theirs["code"].as_str(), theirs["details"]["field"].as_str()),
        (Some("NOT_FOUND"), Some("ai_judge_model_key"))
    );
    assert_eq!(
        theirs["message"].as_str().unwrap().replace(&id, "X"),
        missing["message"].as_str().unwrap().replace(&nobody, "X")
    );

    // Public: he reads and uses it, she alone changes it.
    ok(&a, "update_model_profile", json!({"profile_id": id, "visibility": "public"})).await;
    assert!(ok(&b, "list_model_profiles", json!({})).await.to_string().contains(&id));
    ok(&b, "create_battle", battle(&id)).await;
    assert_eq!(
        err(&b, "update_model_profile", json!({"profile_id": id, "model": "x"})).await["code"],
        "FORBIDDEN"
    );
    assert_eq!(
        err(&a, "archive_model_profile", json!({"profile_id": id})).await["code"],
        "CONFIRMATION_REQUIRED"
    );
    let archived = ok(&a, "archive_model_profile", json!({"profile_id": id, "confirm": true})).await;
    assert!(archived["archived_at"].is_string());
    assert_eq!(err(&a, "create_battle", battle(&id)).await["code"], "NOT_FOUND");
}
