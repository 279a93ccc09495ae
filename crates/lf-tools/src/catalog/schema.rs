//! The JSON Schemas a tool is listed with, generated from its input and
//! output types and made compact: every connected assistant reads
//! `tools/list` into its context on every conversation, so what it lists
//! costs every user, every time (`cargo xtask catalog-size` prints it; the
//! catalog's lint test holds it to a budget).
//!
//! - Inputs keep every description and constraint a caller needs, without
//!   schemars' `format: int64` noise. (An optional field keeps its `null`:
//!   the schema says what the server takes, and it takes `null` for "not
//!   given".)
//! - Outputs say what a caller reads: names and types, `null` where a field
//!   may be null, `required` only where some fields may be absent. Field
//!   descriptions stay in the code and docs/tools.md; the tool's description
//!   says what it answers.

use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The input schema of `T`, as listed.
pub(crate) fn input<T: JsonSchema>() -> Arc<JsonObject> {
    let mut schema = generate::<T>(SchemaSettings::draft2020_12());
    walk(&mut schema, &mut |node| drop_number_format(node, false));
    Arc::new(schema)
}

/// The output schema of `T`, as listed.
pub(crate) fn output<T: JsonSchema>() -> Arc<JsonObject> {
    let mut schema = generate::<T>(SchemaSettings::draft2020_12().for_serialize());
    walk(&mut schema, &mut |node| {
        node.remove("description");
        drop_number_format(node, true);
        drop_full_required(node);
        // A nested object's `properties` say it is one; MCP asks `type`
        // of the root only. (`["object", "null"]` stays: it says null.)
        if node.get("type").is_some_and(|t| t == "object") && node.contains_key("properties") {
            node.remove("type");
        }
    });
    schema.insert("type".to_owned(), Value::from("object"));
    Arc::new(schema)
}

fn generate<T: JsonSchema>(mut settings: SchemaSettings) -> JsonObject {
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let Value::Object(mut object) = serde_json::to_value(schema).unwrap_or_default() else {
        unreachable!("a derived schema is an object")
    };
    // The wrapper type's name and doc are noise to a model.
    object.remove("title");
    object.remove("description");
    object.remove("$schema");
    object
}

/// In a listing of tools, a field description that an earlier tool already
/// gave (the same words, as `The lens.` for every `lens_id`, or a shared
/// shape's fields) is left out: the assistant reads the whole listing at
/// once, and each repeat costs every conversation.
pub(crate) fn drop_repeated_descriptions(tools: &mut [rmcp::model::Tool]) {
    let mut seen = std::collections::HashSet::new();
    for tool in tools {
        let mut schemas = vec![&mut tool.input_schema];
        schemas.extend(tool.output_schema.as_mut());
        for schema in schemas {
            let schema = Arc::make_mut(schema);
            for (_, prop) in properties_mut(schema) {
                walk(prop, &mut |node| {
                    if let Some(Value::String(d)) = node.get("description")
                        && !seen.insert(d.clone())
                    {
                        node.remove("description");
                    }
                });
            }
        }
    }
}

/// The properties of an object schema (its own description, the
/// tool's, is never one of them).
fn properties_mut(schema: &mut JsonObject) -> impl Iterator<Item = (&String, &mut JsonObject)> {
    schema
        .get_mut("properties")
        .and_then(Value::as_object_mut)
        .into_iter()
        .flat_map(|props| props.iter_mut())
        .filter_map(|(k, v)| v.as_object_mut().map(|v| (k, v)))
}

/// Calls `f` on every schema object in `schema`: itself, its properties,
/// items and alternatives (never on a `properties` map itself, whose keys
/// are field names, some of them `description` or `type`).
fn walk(schema: &mut JsonObject, f: &mut impl FnMut(&mut JsonObject)) {
    f(schema);
    for (key, value) in schema.iter_mut() {
        match (key.as_str(), value) {
            ("properties", Value::Object(props)) => {
                for prop in props.values_mut() {
                    if let Value::Object(p) = prop {
                        walk(p, f);
                    }
                }
            }
            ("items" | "additionalProperties", Value::Object(sub)) => walk(sub, f),
            ("anyOf" | "oneOf" | "allOf", Value::Array(subs)) => {
                for sub in subs {
                    if let Value::Object(s) = sub {
                        walk(s, f);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Drops schemars' `format` of an integer or float (`int64`, `uint32`,
/// `double`…), and on outputs the bounds it adds to unsigned ones (`0`,
/// and `255` for a `u8`): the type says what matters. (`uuid` and other
/// string formats stay.)
fn drop_number_format(node: &mut JsonObject, output: bool) {
    let Some(Value::String(format)) = node.get("format") else { return };
    let unsigned = format.starts_with("uint");
    if !(unsigned || format.starts_with("int") || format == "double" || format == "float") {
        return;
    }
    let bits = format.trim_start_matches("uint").parse::<u32>().ok();
    node.remove("format");
    if output && unsigned {
        if node.get("minimum") == Some(&Value::from(0)) {
            node.remove("minimum");
        }
        let max = bits.filter(|b| *b < 64).map(|b| (1u64 << b) - 1);
        if max.is_some_and(|m| node.get("maximum") == Some(&Value::from(m))) {
            node.remove("maximum");
        }
    }
}

/// `required` on an output object that lists every property says nothing
/// a caller needs (results carry every field their schema names, `null`
/// when empty): dropped. Kept where some fields may be absent.
fn drop_full_required(node: &mut JsonObject) {
    let (Some(Value::Array(required)), Some(Value::Object(props))) =
        (node.get("required"), node.get("properties"))
    else {
        return;
    };
    if required.len() == props.len()
        && required.iter().all(|r| r.as_str().is_some_and(|r| props.contains_key(r)))
    {
        node.remove("required");
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::*;

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        One,
        Two,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct In {
        /// A count.
        #[schemars(range(min = 0, max = 9))]
        count: Option<i64>,
        /// A kind.
        kind: Option<Kind>,
        /// A name.
        name: String,
    }

    #[allow(dead_code)]
    #[derive(Serialize, JsonSchema)]
    struct Inner {
        /// The type, as a field name.
        r#type: String,
        /// A description, as a field name.
        description: Option<String>,
    }

    #[allow(dead_code)]
    #[derive(Serialize, JsonSchema)]
    struct Out {
        /// How many.
        total: u64,
        /// A share.
        share: f64,
        inner: Vec<Inner>,
        small: u8,
        #[serde(skip_serializing_if = "Option::is_none")]
        maybe: Option<String>,
    }

    #[test]
    fn inputs_keep_descriptions_and_ranges_and_lose_noise() {
        let s = Value::Object((*input::<In>()).clone());
        assert_eq!(
            s["properties"]["count"],
            json!({"description": "A count.", "type": ["integer", "null"], "minimum": 0, "maximum": 9})
        );
        assert_eq!(s["properties"]["kind"]["type"], json!(["string", "null"]));
        assert_eq!(s["properties"]["kind"]["enum"], json!(["one", "two", null]));
        assert_eq!(s["properties"]["kind"]["description"], "A kind.");
        assert_eq!(s["required"], json!(["name"]));
    }

    #[test]
    fn outputs_say_names_and_types() {
        let s = Value::Object((*output::<Out>()).clone());
        let props = &s["properties"];
        assert_eq!(props["total"], json!({"type": "integer"}));
        assert_eq!(props["share"], json!({"type": "number"}));
        assert_eq!(props["small"], json!({"type": "integer"}));
        assert_eq!(s["type"], "object");
        let inner = &props["inner"]["items"];
        assert_eq!(inner["properties"]["type"], json!({"type": "string"}), "a field named type stays");
        assert_eq!(inner["properties"]["description"], json!({"type": ["string", "null"]}));
        assert!(inner.get("required").is_none(), "every field is there: no required list");
        assert!(inner.get("type").is_none(), "its properties say it is an object");
        assert_eq!(s["required"], json!(["total", "share", "inner", "small"]), "maybe may be absent");
        assert!(!s.to_string().contains("How many"), "{s}");
    }
}
