//! The kv store's contract on the in-memory store, and its checked key and
//! value.

use std::sync::Arc;

use lf_core::ErrorCode;
use lf_workflow::kv::{KvKey, KvValue, MAX_KEY_CHARS, MAX_VALUE_BYTES, MemoryKv, contract};
use serde_json::json;

#[test]
fn the_memory_store_keeps_the_contract() {
    let store = Arc::new(MemoryKv::new());
    pollster::block_on(contract::suite(store.clone()));
    pollster::block_on(contract::suite(store));
}

#[test]
fn keys_are_one_to_256_characters_without_control_characters() {
    assert_eq!(KvKey::parse("digest:last_seen").unwrap().as_str(), "digest:last_seen");
    // Characters, not bytes.
    assert!(KvKey::parse(&"é".repeat(MAX_KEY_CHARS)).is_ok());
    for (bad, says) in [
        (String::new(), "empty"),
        ("k".repeat(MAX_KEY_CHARS + 1), "257 characters"),
        ("a\nb".to_owned(), "control character"),
    ] {
        let e = KvKey::parse(&bad).expect_err(&bad);
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains(says), "{}", e.message());
    }
}

#[test]
fn values_are_at_most_64_kib_of_json() {
    let fits = json!("x".repeat(MAX_VALUE_BYTES - 2));
    assert_eq!(KvValue::new(&fits).unwrap().as_str().len(), MAX_VALUE_BYTES);
    let e = KvValue::new(&json!("x".repeat(MAX_VALUE_BYTES - 1))).expect_err("one byte too many");
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains(&format!("{} bytes", MAX_VALUE_BYTES + 1)), "{}", e.message());
    assert_eq!(KvValue::new(&json!({"b": 1, "a": 2})).unwrap().as_str(), r#"{"b":1,"a":2}"#);
}
