//! A generated corpus of bad inputs thrown at every tool of the catalog
//! through `LfServer::call`, on the in-memory store and on SQLite.
//!
//! Only the valid base arguments of each tool are written by hand (the
//! `base` table). Mutations come from each tool's input JSON schema: wrong
//! JSON types, out-of-range numbers, malformed UUIDs, blank, short, long and
//! 10 MB strings, unknown and wrong-case enum values, bad map values and
//! sizes, bad array items and sizes, missing required and unknown fields,
//! plus ids the caller cannot see. A few spec'd refusals that no schema can
//! express (BAD_INPUT, CONFIRMATION_REQUIRED, parameters absent from the
//! template…) are listed in `semantic_cases`.
//!
//! Every case must answer a tool result with `isError: true`, a code from
//! the set expected for its kind of mutation, a short message that does not
//! echo a 10 MB value, `details.field` naming the argument for a
//! single-field INVALID_ARGUMENT, and leave the store exactly as it was.

use std::collections::BTreeMap;
use std::time::Instant;

use lf_core::{LensId, LenserId, Principal, VersionId, WorkflowId};
use lf_tests::{Digest, Reply, StoreKind, TestStore, call, lenser};
use lf_tools::{Catalog, LfServer};
use serde_json::{Map, Value, json};

const INVALID: &[&str] = &["INVALID_ARGUMENT"];
const NOT_FOUND: &[&str] = &["NOT_FOUND"];
const BAD_INPUT: &[&str] = &["BAD_INPUT"];
const CONFIRMATION: &[&str] = &["CONFIRMATION_REQUIRED"];
const MISSING_LENSER: &[&str] = &["MISSING_LENSER"];

/// 10 MiB: far beyond any limit, built once per run.
const HUGE_BYTES: usize = 10 * 1024 * 1024;
/// A message a client shows a user is a sentence or two, not a dump.
const MAX_MESSAGE_CHARS: usize = 1_000;
/// An error result, message and details together.
const MAX_ERROR_BYTES: usize = 4_096;
/// The corpus must stay big enough to mean something.
const MIN_CASES: usize = 500;

const BODY: &str = "You are a senior [[Language]] engineer. Review the following code for bugs, security issues and performance problems.\n\nCode:\n[[Code]]\n\nFocus area: [[FocusArea!]]";

fn body_v2() -> String {
    format!("{BODY}\nTone: [[Tone!]]")
}

fn body_v3() -> String {
    format!("{BODY}\nTone: [[Tone!]]\nBe concise.")
}

/// A refinement of BODY's optional FocusArea, with every field of a
/// parameter declaration set.
fn focus_param() -> Value {
    json!({
        "label": "FocusArea",
        "optional": true,
        "description": "What to look at first",
        "default": "security",
        "options": ["security", "performance"],
    })
}

fn values() -> Value {
    json!({"Language": "Rust", "Code": "fn main() {}", "FocusArea": "performance"})
}

/// The rows every case points at. `lens` is the caller's own public lens
/// (versions 1.0.0 = `v1` and 1.1.0 = `v2`); the others are rows the caller
/// cannot see.
struct Fixture {
    owner: LenserId,
    lens: String,
    v1: String,
    v2: String,
    /// Another lenser's private lens and its version.
    hidden_lens: String,
    hidden_version: String,
    /// A lens of the caller's, deleted.
    deleted_lens: String,
    /// A version of another lens of the caller's: not a version of `lens`.
    sibling_version: String,
    /// Some workflow to track a run against.
    workflow: String,
}

async fn ok(server: &LfServer, tool: &str, args: Value) -> Value {
    let reply = call(server, tool, args).await.unwrap_or_else(|e| panic!("fixture {tool}: {e}"));
    assert!(!reply.is_error, "fixture {tool} failed: {}", reply.value);
    reply.value
}

fn id_of(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_else(|| panic!("no {key} in {v}")).to_owned()
}

async fn fixture(store: &TestStore) -> Fixture {
    let (owner, other) = (LenserId::new(), LenserId::new());
    let a = store.server(lenser(owner));
    let b = store.server(lenser(other));
    let created = ok(
        &a,
        "create_lens",
        json!({"title": "Code reviewer", "template_body": BODY, "params": [focus_param()], "visibility": "public"}),
    )
    .await;
    let lens = id_of(&created, "id");
    let updated = ok(&a, "update_lens", json!({"lens_id": lens, "template_body": body_v2()})).await;
    assert_eq!(updated["semver"], "1.1.0");
    let hidden = ok(
        &b,
        "create_lens",
        json!({"title": "Hidden reviewer", "template_body": BODY, "visibility": "private"}),
    )
    .await;
    let sibling = ok(
        &a,
        "create_lens",
        json!({"title": "Summarizer", "template_body": "Summarize the following text in [[Count]] bullet points for a busy reader: [[Text]]"}),
    )
    .await;
    let deleted = ok(&a, "create_lens", json!({"title": "Deleted reviewer", "template_body": BODY})).await;
    let deleted_lens = id_of(&deleted, "id");
    ok(&a, "delete_lens", json!({"lens_id": deleted_lens, "confirm": true})).await;
    Fixture {
        owner,
        v1: id_of(&created["head_version"], "id"),
        v2: id_of(&updated, "id"),
        lens,
        hidden_lens: id_of(&hidden, "id"),
        hidden_version: id_of(&hidden["head_version"], "id"),
        deleted_lens,
        sibling_version: id_of(&sibling["head_version"], "id"),
        workflow: WorkflowId::new().to_string(),
    }
}

/// One valid argument set of a tool, for the fixture's caller.
struct Base {
    args: Value,
    /// Whether the call creates a row someone must own: a Service principal
    /// with no lenser gets MISSING_LENSER.
    needs_owner: bool,
}

/// The one hand-written table: valid arguments per tool, every optional
/// argument included where one can be, so that each is mutated in context.
fn base(tool: &str, fx: &Fixture) -> Option<Base> {
    let args = match tool {
        "list_lenses" => json!({
            "limit": 10, "offset": 0, "visibility": "public", "status": "published",
            "lenser_id": fx.owner.to_string(), "include_archived": true,
        }),
        "search_lenses" => json!({"query": "code review", "visibility": "public", "limit": 10, "offset": 0}),
        "get_lens" | "list_lens_versions" | "archive_lens" | "restore_lens" => json!({"lens_id": fx.lens}),
        "get_lens_version" => json!({"lens_id": fx.lens, "semver": "1.0.0"}),
        "extract_lens_params" => json!({"lens_id": fx.lens, "version_id": fx.v1}),
        "validate_lens_params" => json!({"lens_id": fx.lens, "version_id": fx.v1, "values": values()}),
        "create_lens" => json!({
            "title": "Another reviewer", "template_body": BODY, "description": "Reviews code",
            "visibility": "private", "params": [focus_param()],
        }),
        "update_lens" => json!({
            "lens_id": fx.lens, "template_body": body_v3(), "visibility": "community",
            "params": [focus_param()], "title": "Code reviewer 2", "description": "Reviews code",
            "changelog": "Asks for concision.",
        }),
        "fork_lens" => json!({
            "source_lens_id": fx.lens, "title": "My reviewer", "template_body": BODY, "visibility": "private",
        }),
        "set_lens_visibility" => json!({"lens_id": fx.lens, "visibility": "community"}),
        "run_lens" => json!({
            "lens_id": fx.lens, "version_id": fx.v1, "param_values": values(), "workflow_id": fx.workflow,
        }),
        "find_and_run_lens" => {
            json!({"query": "senior engineer", "param_values": values(), "visibility": "public"})
        }
        "delete_lens" => json!({"lens_id": fx.lens, "confirm": true}),
        "diff_lens_versions" => json!({"lens_id": fx.lens, "from": "1.0.0", "to": fx.v2}),
        _ => return None,
    };
    Some(Base { args, needs_owner: matches!(tool, "create_lens" | "fork_lens") })
}

/// Where the spec answers a mutation with another code than INVALID_ARGUMENT.
fn spec_override(tool: &str, prop: &str, kind: &str) -> Option<&'static [&'static str]> {
    match (tool, prop, kind) {
        // confirm is "must be exactly true": false, null or nothing all ask for it.
        ("delete_lens", "confirm", "missing" | "null" | "const") => Some(CONFIRMATION),
        _ => None,
    }
}

// ---------------------------------------------------------------- generation

/// One bad value for a property.
struct Mutation {
    kind: &'static str,
    what: String,
    value: Value,
    codes: &'static [&'static str],
}

impl Mutation {
    fn new(kind: &'static str, what: impl Into<String>, value: Value) -> Self {
        Self { kind, what: what.into(), value, codes: INVALID }
    }
    fn codes(mut self, codes: &'static [&'static str]) -> Self {
        self.codes = codes;
        self
    }
}

/// One call of the corpus.
struct Case {
    tool: &'static str,
    kind: &'static str,
    what: String,
    args: Value,
    codes: &'static [&'static str],
    /// The argument `details.field` must name, for an INVALID_ARGUMENT.
    field: Option<String>,
}

struct Gen<'a> {
    fx: &'a Fixture,
    huge: &'a Value,
}

fn schema_types(schema: &Value) -> (String, bool) {
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let primary = types.iter().find(|t| **t != "null").copied().unwrap_or("any").to_owned();
    (primary, types.contains(&"null"))
}

fn uint(schema: &Value, key: &str) -> Option<usize> {
    schema.get(key).and_then(Value::as_u64).map(|n| n as usize)
}

/// `n` characters of whitespace.
fn blank(n: usize) -> String {
    " \t\n ".chars().cycle().take(n).collect()
}

impl Gen<'_> {
    fn huge(&self) -> Mutation {
        Mutation::new("10 MB value", "a 10 MB string", self.huge.clone())
    }

    /// Values of other JSON types than `primary`.
    fn wrong_types(&self, primary: &str, nullable: bool) -> Vec<Mutation> {
        let candidates: Vec<(&str, Value)> = vec![
            ("string", json!("5")),
            ("integer", json!(42)),
            ("float", json!(1.5)),
            ("float", json!(1e300)),
            ("boolean", json!(true)),
            ("array", json!(["x"])),
            ("object", json!({"x": "y"})),
        ];
        let mut out: Vec<Mutation> = candidates
            .into_iter()
            .filter(|(t, _)| *t != primary && !(primary == "number" && *t == "integer"))
            .map(|(t, v)| Mutation::new("wrong type", format!("a {t} ({v}) for a {primary}"), v))
            .collect();
        if primary != "string" {
            let mut m = self.huge();
            m.kind = "wrong type";
            m.what = format!("a 10 MB string for a {primary}");
            out.push(m);
        }
        if !nullable {
            out.push(Mutation::new("null", "null", Value::Null));
        }
        out
    }

    /// Every bad value of a property with `schema`, named `name`.
    fn mutations(&self, name: &str, schema: &Value, base: Option<&Value>) -> Vec<Mutation> {
        let (primary, nullable) = schema_types(schema);
        let mut out = self.wrong_types(&primary, nullable);
        if let Some(c) = schema.get("const").and_then(Value::as_bool) {
            out.push(Mutation::new("const", format!("{} where only {c} is allowed", !c), json!(!c)));
        }
        match primary.as_str() {
            "string" => out.extend(self.string(name, schema)),
            "integer" => out.extend(self.integer(schema)),
            "object" => out.extend(self.map(schema)),
            "array" => out.extend(self.array(schema, base)),
            _ => {}
        }
        out
    }

    fn string(&self, name: &str, schema: &Value) -> Vec<Mutation> {
        let mut out = vec![self.huge()];
        if schema["format"] == "uuid" {
            let u = LensId::new().to_string();
            let mut non_hex = u.clone();
            non_hex.replace_range(35.., "g");
            for (what, v) in [
                ("empty", String::new()),
                ("not a UUID", "not-a-uuid".to_owned()),
                ("braced", format!("{{{u}}}")),
                ("URN form", format!("urn:uuid:{u}")),
                ("one char short", u[..35].to_owned()),
                ("one char long", format!("{u}0")),
                ("non-hex", non_hex),
                ("no hyphens", u.replace('-', "")),
                ("padded", format!(" {u} ")),
            ] {
                out.push(Mutation::new("malformed UUID", what, json!(v)));
            }
            let fx = self.fx;
            // Ids name rows by convention: *lens_id a lens, version_id a version.
            let unseen: Vec<(&str, String)> = if name.ends_with("lens_id") {
                vec![
                    ("another lenser's private lens", fx.hidden_lens.clone()),
                    ("a deleted lens", fx.deleted_lens.clone()),
                    ("an unknown lens", LensId::new().to_string()),
                ]
            } else if name == "version_id" {
                vec![
                    ("a version of another lenser's private lens", fx.hidden_version.clone()),
                    ("a version of another lens of the caller's", fx.sibling_version.clone()),
                    ("an unknown version", VersionId::new().to_string()),
                ]
            } else {
                vec![]
            };
            for (what, id) in unseen {
                out.push(Mutation::new("unseen id", what, json!(id)).codes(NOT_FOUND));
            }
            return out;
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            let first = values.iter().find_map(Value::as_str).unwrap_or("x");
            let mut capitalized: Vec<char> = first.chars().collect();
            capitalized[0] = capitalized[0].to_ascii_uppercase();
            for (what, v) in [
                ("unknown enum value", "secret".to_owned()),
                ("upper-case enum value", first.to_uppercase()),
                ("capitalized enum value", capitalized.into_iter().collect()),
                ("padded enum value", format!(" {first} ")),
                ("empty enum value", String::new()),
            ] {
                out.push(Mutation::new("bad enum value", what, json!(v)));
            }
            return out;
        }
        let (min, max) = (uint(schema, "minLength").unwrap_or(0), uint(schema, "maxLength"));
        if min >= 1 {
            out.push(Mutation::new("blank", "empty string", json!("")));
            let n = min.max(3);
            if max.is_none_or(|max| n <= max) {
                out.push(Mutation::new("blank", format!("{n} whitespace characters"), json!(blank(n))));
            }
        }
        if min > 1 {
            out.push(Mutation::new(
                "too short",
                format!("{} characters", min - 1),
                json!("x".repeat(min - 1)),
            ));
        }
        if let Some(max) = max {
            out.push(Mutation::new(
                "too long",
                format!("{} characters", max + 1),
                json!("x".repeat(max + 1)),
            ));
        }
        out
    }

    fn integer(&self, schema: &Value) -> Vec<Mutation> {
        let min = schema.get("minimum").and_then(Value::as_i64);
        let max = schema.get("maximum").and_then(Value::as_i64);
        let mut bad: Vec<i64> = vec![-1, 0, i64::MIN];
        bad.extend(min.map(|m| m - 1));
        bad.retain(|v| min.is_some_and(|m| *v < m));
        bad.extend(max.map(|m| m + 1));
        // Huge whatever the schema says: no listing pages that far.
        bad.push(i64::MAX);
        bad.sort_unstable();
        bad.dedup();
        let mut out: Vec<Mutation> =
            bad.into_iter().map(|v| Mutation::new("out of range", v.to_string(), json!(v))).collect();
        out.push(Mutation::new("out of range", "u64::MAX (beyond i64)", json!(u64::MAX)));
        out
    }

    fn map(&self, schema: &Value) -> Vec<Mutation> {
        if schema.get("additionalProperties").is_none_or(|a| a == &Value::Bool(false)) {
            return vec![];
        }
        let mut out = Vec::new();
        for v in [json!(1), json!(1.5), json!(true), Value::Null, json!(["Rust"]), json!({"x": "y"})] {
            out.push(Mutation::new("map value", format!("map value {v}"), json!({"Language": v})));
        }
        out.push(Mutation::new("10 MB value", "a 10 MB map value", json!({"Language": self.huge})));
        let mut key_only = Map::new();
        key_only.insert(self.huge.as_str().unwrap_or_default().to_owned(), json!(1));
        out.push(Mutation::new(
            "10 MB value",
            "a 10 MB map key with a number value",
            Value::Object(key_only),
        ));
        let many: Map<String, Value> = (0..501).map(|i| (format!("Label{i}"), json!("v"))).collect();
        out.push(Mutation::new("too many entries", "501 map entries", Value::Object(many)));
        out
    }

    fn array(&self, schema: &Value, base: Option<&Value>) -> Vec<Mutation> {
        let items = &schema["items"];
        let (item_type, _) = schema_types(items);
        let mut out = Vec::new();
        let wrong_items: Vec<Value> = if item_type == "object" {
            vec![json!(1), json!("x"), json!(true), Value::Null, json!([])]
        } else {
            vec![json!(1), json!(true), Value::Null, json!({}), json!([])]
        };
        for v in wrong_items {
            out.push(Mutation::new("bad array item", format!("an item {v}"), json!([v])));
        }
        let base_item = base.and_then(|b| b.as_array()).and_then(|a| a.first()).cloned();
        if let Some(max) = uint(schema, "maxItems") {
            let many: Vec<Value> = (0..=max)
                .map(|i| {
                    base_item
                        .clone()
                        .filter(|_| item_type == "object")
                        .unwrap_or_else(|| json!(format!("o{i}")))
                })
                .collect();
            out.push(Mutation::new("too many items", format!("{} items", max + 1), Value::Array(many)));
        }
        if item_type == "string" {
            out.push(Mutation::new("10 MB value", "a 10 MB item", json!([self.huge])));
        }
        let Some(Value::Object(item)) = base_item.filter(|_| item_type == "object") else {
            return out;
        };
        let mut unknown = item.clone();
        unknown.insert("bogus_field".to_owned(), json!(1));
        out.push(Mutation::new("unknown field", "an item with an unknown field", json!([unknown])));
        for req in
            items.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
        {
            let mut missing = item.clone();
            missing.remove(req);
            out.push(Mutation::new("missing", format!("an item without {req}"), json!([missing])));
        }
        for (name, prop) in items.get("properties").and_then(Value::as_object).into_iter().flatten() {
            for m in self.mutations(name, prop, item.get(name)) {
                let mut bad = item.clone();
                bad.insert(name.clone(), m.value);
                out.push(Mutation {
                    kind: m.kind,
                    what: format!("item {name}: {}", m.what),
                    value: json!([bad]),
                    codes: m.codes,
                });
            }
        }
        out
    }
}

fn with(base: &Value, key: &str, v: Value) -> Value {
    let mut args = base.clone();
    args[key] = v;
    args
}

fn without(base: &Value, key: &str) -> Value {
    let mut args = base.clone();
    args.as_object_mut().expect("arguments are an object").remove(key);
    args
}

/// The schema-driven cases of one tool.
fn generated_cases(g: &Gen, tool: &'static str, schema: &Map<String, Value>, base: &Value) -> Vec<Case> {
    let mut out = Vec::new();
    let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    for (name, prop) in &props {
        for m in g.mutations(name, prop, base.get(name)) {
            out.push(Case {
                tool,
                kind: m.kind,
                codes: spec_override(tool, name, m.kind).unwrap_or(m.codes),
                what: format!("{name}: {}", m.what),
                args: with(base, name, m.value),
                field: Some(name.clone()),
            });
        }
    }
    for req in
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
    {
        out.push(Case {
            tool,
            kind: "missing",
            what: format!("{req} left out"),
            args: without(base, req),
            codes: spec_override(tool, req, "missing").unwrap_or(INVALID),
            field: Some(req.to_owned()),
        });
    }
    out.push(Case {
        tool,
        kind: "unknown field",
        what: "an unknown top-level field".to_owned(),
        args: with(base, "bogus_field", json!(1)),
        codes: INVALID,
        field: Some("bogus_field".to_owned()),
    });
    out.push(Case {
        tool,
        kind: "unknown field",
        what: "an unknown top-level field with a 10 MB name".to_owned(),
        args: with(base, g.huge.as_str().unwrap_or_default(), json!(1)),
        codes: INVALID,
        // Naming it would echo it; the size limits are what matter here.
        field: None,
    });
    out
}

/// Refusals the spec defines that no schema expresses, for the tools whose
/// schema has the argument involved.
fn semantic_cases(tool: &'static str, schema: &Map<String, Value>, base: &Value, fx: &Fixture) -> Vec<Case> {
    let has = |p: &str| schema.get("properties").and_then(|ps| ps.get(p)).is_some();
    let mut out = Vec::new();
    let mut push = |what: &str, args: Value, codes: &'static [&'static str], field: Option<&str>| {
        out.push(Case {
            tool,
            kind: "semantic",
            what: what.to_owned(),
            args,
            codes,
            field: field.map(str::to_owned),
        });
    };
    if tool == "get_lens_version" {
        push("neither version_id nor semver", without(base, "semver"), BAD_INPUT, None);
        for s in ["1.0", "v1.0.0", "01.0.0", "1.0.0-beta", "1.0.0.0", "", " 1.0.0", "1.0.99999999999"] {
            push(&format!("semver {s:?}"), with(base, "semver", json!(s)), INVALID, Some("semver"));
        }
        push("semver of no version", with(base, "semver", json!("9.9.9")), NOT_FOUND, None);
    }
    if tool == "diff_lens_versions" {
        for key in ["from", "to"] {
            for s in ["", "1.0", "v1", "not-a-uuid", "1.0.0.0", "-"] {
                push(&format!("{key} {s:?}"), with(base, key, json!(s)), INVALID, Some(key));
            }
            push(&format!("{key}: semver of no version"), with(base, key, json!("9.9.9")), NOT_FOUND, None);
            push(
                &format!("{key}: an unknown version id"),
                with(base, key, json!(VersionId::new().to_string())),
                NOT_FOUND,
                None,
            );
            for (what, id) in [
                ("a version of another lenser's private lens", &fx.hidden_version),
                ("a version of another lens of the caller's", &fx.sibling_version),
            ] {
                push(&format!("{key}: {what}"), with(base, key, json!(id)), NOT_FOUND, None);
            }
        }
    }
    if has("query") {
        push("a query of punctuation only", with(base, "query", json!("%%% ...")), INVALID, Some("query"));
        let words: Vec<String> = (0..17).map(|i| format!("word{i}")).collect();
        push("a query of 17 words", with(base, "query", json!(words.join(" "))), INVALID, Some("query"));
    }
    if has("params") {
        for (what, params) in [
            ("a parameter absent from the template", json!([{"label": "Nope"}])),
            ("a default on a required parameter", json!([{"label": "Language", "default": "Rust"}])),
            ("a parameter declared twice", json!([{"label": "Code"}, {"label": "code"}])),
            (
                "a default outside the options",
                json!([{"label": "FocusArea", "default": "style", "options": ["security", "performance"]}]),
            ),
            ("duplicate options", json!([{"label": "FocusArea", "options": ["a", "a"]}])),
            ("a blank option", json!([{"label": "FocusArea", "options": [" "]}])),
        ] {
            push(what, with(base, "params", params), INVALID, Some("params"));
        }
    }
    if has("template_body") {
        let body: String = (0..501).map(|i| format!("[[P{i}]] ")).collect();
        push(
            "a template with 501 parameters",
            with(base, "template_body", json!(body)),
            INVALID,
            Some("template_body"),
        );
    }
    if tool == "update_lens" {
        push(
            "a changelog with no new version",
            json!({"lens_id": fx.lens, "changelog": "Only a note."}),
            INVALID,
            Some("changelog"),
        );
    }
    if has("param_values") {
        let mut bad = values();
        bad["FocusArea"] = json!("style");
        push(
            "a value outside the parameter's options",
            with(base, "param_values", bad),
            INVALID,
            Some("param_values"),
        );
    }
    out
}

// ---------------------------------------------------------------- checks

/// What is wrong with `reply` as the answer to `case`.
fn problems(case: &Case, reply: &Reply) -> Vec<String> {
    let mut out = Vec::new();
    if !reply.is_error {
        out.push("answered a success".to_owned());
        return out;
    }
    let code = reply.code().unwrap_or("<none>");
    if code == "INTERNAL" {
        out.push("answered INTERNAL".to_owned());
    } else if !case.codes.contains(&code) {
        out.push(format!("code {code}, expected one of {:?}", case.codes));
    }
    let message = reply.message();
    let chars = message.chars().count();
    if message.trim().is_empty() {
        out.push("empty message".to_owned());
    } else if chars >= MAX_MESSAGE_CHARS {
        out.push(format!("message of {chars} characters"));
    }
    if reply.text_len() >= MAX_ERROR_BYTES {
        out.push(format!("error result of {} bytes", reply.text_len()));
    }
    if let (Some(field), "INVALID_ARGUMENT") = (&case.field, code) {
        let named = reply.field().is_some_and(|f| {
            f == field || f.strip_prefix(field.as_str()).is_some_and(|rest| rest.starts_with(['[', '.']))
        });
        if !named {
            let got: String = reply.field().unwrap_or("<none>").chars().take(60).collect();
            out.push(format!("details.field {got:?}, expected {field:?}"));
        }
    }
    out
}

#[derive(Default)]
struct Tally {
    total: usize,
    by_tool: BTreeMap<String, usize>,
    by_code: BTreeMap<String, usize>,
    by_kind: BTreeMap<String, usize>,
    failures: Vec<String>,
}

impl Tally {
    fn fail(&mut self, tool: &str, what: &str, why: impl std::fmt::Display) {
        self.failures.push(format!("{tool} / {what}: {why}"));
    }

    fn print(&self, kind: StoreKind, secs: f64) {
        println!("bad-input corpus on {}: {} cases in {secs:.1}s", kind.as_str(), self.total);
        for (title, map) in
            [("per tool", &self.by_tool), ("per code", &self.by_code), ("per mutation", &self.by_kind)]
        {
            println!("  {title}:");
            for (k, n) in map {
                println!("    {k:<28} {n:>5}");
            }
        }
    }
}

async fn run_case(
    server: &LfServer,
    store: &TestStore,
    case: Case,
    baseline: &mut Digest,
    tally: &mut Tally,
) {
    let Case { tool, kind, ref what, .. } = case;
    let reply = call(server, tool, case.args.clone()).await;
    tally.total += 1;
    *tally.by_tool.entry(tool.to_owned()).or_default() += 1;
    *tally.by_kind.entry(kind.to_owned()).or_default() += 1;
    match &reply {
        Ok(r) => {
            *tally.by_code.entry(r.code().unwrap_or("(success)").to_owned()).or_default() += 1;
            for p in problems(&case, r) {
                tally.fail(tool, what, format!("{p}; got {}", r.brief()));
            }
        }
        Err(e) => {
            *tally.by_code.entry("(no tool result)".to_owned()).or_default() += 1;
            tally.fail(tool, what, e);
        }
    }
    let after = store.digest().await;
    if after != *baseline {
        tally.fail(tool, what, format!("the store changed: {}", baseline.changes(&after).join("; ")));
        *baseline = after;
    }
}

/// Every base argument set must be valid, or its mutations prove nothing.
/// Each runs on a fresh store of its own, since some of them delete.
async fn check_bases(kind: StoreKind, catalog: &Catalog, tally: &mut Tally) {
    for tool in catalog.tools() {
        let store = TestStore::open(kind).await;
        let fx = fixture(&store).await;
        let Some(base) = base(tool.name, &fx) else {
            tally.fail(tool.name, "base", "no base argument set: add one to the `base` table");
            continue;
        };
        match call(&store.server(lenser(fx.owner)), tool.name, base.args).await {
            Ok(r) if !r.is_error => {}
            Ok(r) => tally.fail(tool.name, "base", format!("the base arguments are refused: {}", r.brief())),
            Err(e) => tally.fail(tool.name, "base", e),
        }
    }
}

async fn corpus(kind: StoreKind) {
    let started = Instant::now();
    let huge = Value::String("x".repeat(HUGE_BYTES));
    let mut tally = Tally::default();
    let store = TestStore::open(kind).await;
    check_bases(kind, store.catalog(), &mut tally).await;

    let fx = fixture(&store).await;
    let caller = store.server(lenser(fx.owner));
    let service = store.server(Principal::Service { acting_as: None });
    let g = Gen { fx: &fx, huge: &huge };
    let mut baseline = store.digest().await;
    for tool in store.catalog().tools() {
        let Some(base) = base(tool.name, &fx) else { continue };
        let schema = &*tool.input_schema;
        let mut cases = generated_cases(&g, tool.name, schema, &base.args);
        cases.extend(semantic_cases(tool.name, schema, &base.args, &fx));
        for case in cases {
            run_case(&caller, &store, case, &mut baseline, &mut tally).await;
        }
        if base.needs_owner {
            let case = Case {
                tool: tool.name,
                kind: "no owner",
                what: "valid input from a Service principal with no lenser".to_owned(),
                args: base.args,
                codes: MISSING_LENSER,
                field: None,
            };
            run_case(&service, &store, case, &mut baseline, &mut tally).await;
        }
    }

    tally.print(kind, started.elapsed().as_secs_f64());
    let n = tally.failures.len();
    assert!(
        tally.failures.is_empty(),
        "{n} of {} bad-input cases on {} failed:\n{}",
        tally.total,
        kind.as_str(),
        tally.failures.join("\n")
    );
    assert!(tally.total >= MIN_CASES, "only {} cases: the generator lost its reach", tally.total);
}

#[tokio::test]
async fn bad_inputs_on_the_memory_store() {
    corpus(StoreKind::Memory).await;
}

#[tokio::test]
async fn bad_inputs_on_sqlite() {
    corpus(StoreKind::Sqlite).await;
}
