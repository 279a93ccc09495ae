//! Storage: the workflow owner's key-value store and cache, kept across
//! runs in this server's database (lf-workflow's `kv`).

use serde_json::json;

use super::super::Category::Storage;
use super::super::spec::{FieldKind, IoType, NodeTypeSpec, STORE_RETRY, SideEffect, entry, field, port};

fn key_field() -> super::ConfigField {
    field("key", "Key", FieldKind::Template, "The entry's key, 1 to 256 characters after [[name]] placeholders are filled; keys are per workflow owner.").required()
}

fn cache_key() -> super::ConfigField {
    field(
        "key",
        "Key",
        FieldKind::Template,
        "The cache entry, [[name]] placeholders filled; per workflow owner.",
    )
    .required()
}

pub(super) fn entries() -> Vec<NodeTypeSpec> {
    vec![
        entry("kv_store_read", Storage, "Read value", "Reads the value stored under `key` in the owner's key-value store (`default` when there is none).")
            .aliases(&["kv_get", "kv_read"])
            .caps(&["kv", "storage", "read", "state"])
            .retry(STORE_RETRY)
            .side_effect(SideEffect::None)
            .outputs(vec![port("found", IoType::Boolean, "Whether the key was there."), port("value", IoType::Json, "The value, or `default`.")])
            .fields(vec![key_field(), field("default", "Default", FieldKind::Json, "The value when the key is not there.").default(json!(null))])
            .example("Read the last seen item.", json!({"key": "digest:last_seen"}), json!(null), json!({"found": true, "value": "2026-05-01"}), Some(("filter_items", "value → since")))
            .use_case("Remember state between runs."),
        entry("kv_store_write", Storage, "Write value", "Stores the part of its input at `value_path` under `key` in the owner's key-value store, for `ttl_seconds` when set.")
            .aliases(&["kv_set", "kv_write"])
            .caps(&["kv", "storage", "write", "state"])
            .retry(STORE_RETRY)
            .side_effect(SideEffect::InternalWrite)
            .outputs(vec![port("key", IoType::Text, "The key written."), port("value", IoType::Json, "The value stored.")])
            .fields(vec![
                key_field(),
                field("value_path", "Value", FieldKind::JsonPath, "The part of the input to store.").default(json!("output")),
                field("ttl_seconds", "Expires after (s)", FieldKind::Integer, "Forget the value after this long; omit to keep it.").range(1.0, 31_536_000.0),
            ])
            .example("Remember the newest item's date.", json!({"key": "digest:last_seen", "value_path": "$.items[0].date"}), json!({"items": [{"date": "2026-05-01"}]}), json!({"key": "digest:last_seen", "value": "2026-05-01"}), None)
            .use_case("Keep a cursor so the next run starts where this one ended."),
        entry("cache_read", Storage, "Read cache", "Reads the owner's cache entry `key`: `hit` and its value.")
            .aliases(&["cache_get"])
            .caps(&["cache", "read"])
            .retry(STORE_RETRY)
            .side_effect(SideEffect::None)
            .outputs(vec![port("hit", IoType::Boolean, "Whether the entry was there and fresh."), port("value", IoType::Json, "Its value, or null.")])
            .fields(vec![cache_key()])
            .example("Skip work done in the last hour.", json!({"key": "summary:[[url]]"}), json!({"url": "https://example.com"}), json!({"hit": false, "value": null}), Some(("if_condition", "hit → input")))
            .use_case("Avoid paying twice for the same model call."),
        entry("cache_write", Storage, "Write cache", "Stores the part of its input at `value_path` as the owner's cache entry `key` for `ttl_seconds`.")
            .aliases(&["cache_set"])
            .caps(&["cache", "write"])
            .retry(STORE_RETRY)
            .side_effect(SideEffect::InternalWrite)
            .outputs(vec![port("key", IoType::Text, "The entry written."), port("value", IoType::Json, "Its value.")])
            .fields(vec![
                cache_key(),
                field("value_path", "Value", FieldKind::JsonPath, "The part of the input to store.").default(json!("output")),
                field("ttl_seconds", "Fresh for (s)", FieldKind::Integer, "How long the entry is a hit.").default(json!(3_600)).range(1.0, 2_592_000.0),
            ])
            .example("Keep a summary for an hour.", json!({"key": "summary:[[url]]", "value_path": "text"}), json!({"url": "https://example.com", "text": "…"}), json!({"key": "summary:https://example.com", "value": "…"}), None)
            .use_case("Reuse expensive results across runs."),
    ]
}
