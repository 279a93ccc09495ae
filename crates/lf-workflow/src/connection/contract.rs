//! The public contract suite every [`ConnectionStore`] runs: the in-memory
//! store here, SQLite and PostgreSQL in lf-store.
//!
//! ```text
//! lf_workflow::connection::contract::suite(Arc::new(MyStore::open().await?)).await;
//! ```
//!
//! Each check uses fresh owners, so the suite runs against a store that
//! already holds data and may run several times. A failed check panics
//! with what the contract expected.

use std::sync::Arc;

use lf_core::{ErrorCode, LenserId, LfResult, Timestamp};
use serde_json::json;

use super::model::{Connection, SealedSecret};
use super::store::ConnectionStore;
use super::tools::{ConnectionTool, ListedTool, ToolMode};
use crate::lookup::{ConnectionLookup, SavedConnection};
use crate::model::{ConnectionRef, JsonObject, Provider};

/// Runs every check against `store`.
pub async fn suite(store: Arc<dyn ConnectionStore>) {
    let s = store.as_ref();
    round_trip(s).await;
    refs_are_unique_per_owner(s).await;
    removal(s).await;
    lookup(s).await;
    tools(s).await;
}

fn connection(owner: LenserId, r: &str, provider: &str, settings: serde_json::Value) -> Connection {
    let settings: JsonObject = settings.as_object().expect("settings are an object").clone();
    Connection {
        owner,
        connection_ref: ConnectionRef::parse("ref", r).unwrap(),
        provider: Provider::parse("provider", provider).unwrap(),
        settings,
        // Microseconds, as every store keeps them.
        created_at: Timestamp::from_micros(1_760_000_000_123_456),
    }
}

fn sealed(tag: u8) -> SealedSecret {
    // Every byte value, so no store may treat the secret as text.
    SealedSecret::from_bytes((0..=255u8).chain([tag, 0, tag]).collect())
}

fn code<T: std::fmt::Debug>(r: LfResult<T>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code(),
    }
}

fn refs(list: &[Connection]) -> Vec<&str> {
    list.iter().map(|c| c.connection_ref.as_str()).collect()
}

async fn round_trip(s: &dyn ConnectionStore) {
    let owner = LenserId::new();
    assert!(s.list_connections(owner).await.unwrap().is_empty(), "a new owner has no connections");
    // Byte order: uppercase before lowercase, '-' before '_', ASCII before
    // the rest, whatever the database's collation.
    let names = ["team_slack", "ünïcödé ✓", "Alerts", "team-slack", "a 'quoted' \"ref\""];
    let settings =
        json!({"zeta": 1, "alpha": {"nested": [1, 2.5, null, true, "ü"]}, "host": "smtp.example.com"});
    for (i, name) in names.iter().enumerate() {
        s.add_connection(&connection(owner, name, "smtp", settings.clone()), &sealed(i as u8))
            .await
            .expect("add_connection");
    }
    let list = s.list_connections(owner).await.unwrap();
    assert_eq!(
        refs(&list),
        ["Alerts", "a 'quoted' \"ref\"", "team-slack", "team_slack", "ünïcödé ✓"],
        "sorted by ref, in byte order"
    );
    assert_eq!(list[2], connection(owner, "team-slack", "smtp", settings.clone()), "every field as written");
    let keys: Vec<&String> = list[2].settings.keys().collect();
    assert_eq!(keys, ["zeta", "alpha", "host"], "settings keep their key order");

    let (got, secret) = s.connection_secret(owner, &list[2].connection_ref).await.unwrap();
    assert_eq!(got, list[2]);
    assert_eq!(secret, sealed(3), "the sealed secret comes back byte for byte");
    let empty = connection(LenserId::new(), "empty", "http", json!({}));
    s.add_connection(&empty, &sealed(9)).await.unwrap();
    assert_eq!(s.list_connections(empty.owner).await.unwrap(), vec![empty], "empty settings too");
}

async fn refs_are_unique_per_owner(s: &dyn ConnectionStore) {
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let first = connection(alice, "ops", "slack", json!({"channel": "#ops"}));
    s.add_connection(&first, &sealed(1)).await.unwrap();
    let again = connection(alice, "ops", "discord", json!({}));
    let e = s.add_connection(&again, &sealed(2)).await.expect_err("a ref is taken once per owner");
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert!(e.message().contains("\"ops\""), "the CONFLICT names the ref: {}", e.message());
    let list = s.list_connections(alice).await.unwrap();
    assert_eq!(list, vec![first.clone()], "a refused add writes nothing");
    assert_eq!(s.connection_secret(alice, &first.connection_ref).await.unwrap().1, sealed(1));

    let bobs = connection(bob, "ops", "discord", json!({}));
    s.add_connection(&bobs, &sealed(3)).await.expect("another owner may use the same ref");
    assert_eq!(s.list_connections(bob).await.unwrap(), vec![bobs]);
    assert_eq!(s.list_connections(alice).await.unwrap(), vec![first], "owners never see each other's");
}

async fn removal(s: &dyn ConnectionStore) {
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let hers = connection(alice, "mail", "smtp", json!({"host": "mx"}));
    let his = connection(bob, "mail", "smtp", json!({"host": "mx"}));
    s.add_connection(&hers, &sealed(1)).await.unwrap();
    s.add_connection(&his, &sealed(2)).await.unwrap();
    let missing = ConnectionRef::parse("ref", "never-saved").unwrap();
    assert_eq!(code(s.connection_secret(alice, &missing).await), ErrorCode::NotFound);
    assert_eq!(code(s.remove_connection(alice, &missing).await), ErrorCode::NotFound);

    s.remove_connection(alice, &hers.connection_ref).await.expect("remove_connection");
    assert!(s.list_connections(alice).await.unwrap().is_empty(), "removed");
    assert_eq!(code(s.connection_secret(alice, &hers.connection_ref).await), ErrorCode::NotFound);
    assert_eq!(
        code(s.remove_connection(alice, &hers.connection_ref).await),
        ErrorCode::NotFound,
        "removing twice is NOT_FOUND"
    );
    assert_eq!(s.list_connections(bob).await.unwrap(), vec![his.clone()], "another owner's stays");
    assert_eq!(s.connection_secret(bob, &his.connection_ref).await.unwrap().1, sealed(2));
    s.add_connection(&hers, &sealed(4)).await.expect("a removed ref may be saved again");
    assert_eq!(s.connection_secret(alice, &hers.connection_ref).await.unwrap().1, sealed(4));
}

async fn lookup(s: &dyn ConnectionStore) {
    let owner = LenserId::new();
    for (r, p) in [("gh", "github"), ("hook", "http"), ("chat", "telegram")] {
        s.add_connection(&connection(owner, r, p, json!({})), &sealed(0)).await.unwrap();
    }
    let asked = ["hook".to_owned(), "gh".to_owned(), "not-saved".to_owned()];
    let mut found = s.saved(owner, &asked).await.unwrap();
    found.sort_by(|a, b| a.connection_ref.cmp(&b.connection_ref));
    assert_eq!(
        found,
        vec![
            SavedConnection { connection_ref: "gh".into(), provider: "github".into() },
            SavedConnection { connection_ref: "hook".into(), provider: "http".into() },
        ],
        "the lookup answers the saved refs among those asked, with their providers"
    );
    assert!(s.saved(LenserId::new(), &asked).await.unwrap().is_empty(), "another owner has none of them");
}

fn tool(name: &str, mode: ToolMode) -> ConnectionTool {
    let schema = json!({"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "number"}}});
    ConnectionTool {
        tool: ListedTool {
            name: name.into(),
            description: Some(format!("{name}: ünïcödé \"quoted\"")),
            input_schema: schema.as_object().unwrap().clone(),
            annotations: json!({"readOnlyHint": true}).as_object().unwrap().clone(),
        },
        mode,
    }
}

async fn tools(s: &dyn ConnectionStore) {
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let c = connection(alice, "outside", "mcp", json!({"url": "https://mcp.example.com/mcp"}));
    let r = c.connection_ref.clone();
    let at = Timestamp::from_micros(1_760_000_000_000_000);
    let missing = ConnectionRef::parse("ref", "never-saved").unwrap();
    assert_eq!(code(s.connection_tools(alice, &missing).await), ErrorCode::NotFound);
    assert_eq!(code(s.put_connection_tools(alice, &missing, &[], at).await), ErrorCode::NotFound);
    s.add_connection(&c, &sealed(1)).await.unwrap();
    assert!(s.connection_tools(alice, &r).await.unwrap().is_empty(), "a new connection has no tools");
    let written = vec![tool("zeta", ToolMode::On), tool("alpha", ToolMode::Off), tool("mid", ToolMode::Ask)];
    s.put_connection_tools(alice, &r, &written, at).await.expect("put_connection_tools");
    let got = s.connection_tools(alice, &r).await.unwrap();
    assert_eq!(got, written, "every tool as written, in order");
    let keys: Vec<&String> = got[0].tool.input_schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["z", "a"], "schemas keep their key order");
    s.put_connection_tools(alice, &r, &written[1..], at).await.unwrap();
    assert_eq!(s.connection_tools(alice, &r).await.unwrap(), written[1..], "a put replaces them");
    assert_eq!(code(s.connection_tools(bob, &r).await), ErrorCode::NotFound, "another owner has none");
    assert_eq!(code(s.put_connection_tools(bob, &r, &written, at).await), ErrorCode::NotFound);
    s.remove_connection(alice, &r).await.unwrap();
    s.add_connection(&c, &sealed(2)).await.unwrap();
    assert!(
        s.connection_tools(alice, &r).await.unwrap().is_empty(),
        "removing a connection removes its tools"
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_store_passes_twice() {
        let store = std::sync::Arc::new(crate::MemoryConnections::new());
        pollster::block_on(super::suite(store.clone()));
        pollster::block_on(super::suite(store));
    }
}
