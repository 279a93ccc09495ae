//! Secrets never appear in a workflow: a step names a saved connection
//! instead. These walks find secret-named fields at any depth, redact them,
//! and bound the size of a step's JSON. Each is iterative, so a value
//! nested thousands deep costs no stack.

use serde_json::Value;

use crate::model::JsonObject;

/// Field names that hold credentials, compared case-insensitively: the
/// original's list, plus `authorization`.
pub const SECRET_FIELDS: &[&str] = &[
    "api_key",
    "key_ref_id",
    "local_key_id",
    "password",
    "secret",
    "token",
    "webhook_secret",
    "authorization",
];

/// What a redacted value reads as.
pub const REDACTED: &str = "[redacted]";

fn is_secret(key: &str) -> bool {
    SECRET_FIELDS.iter().any(|s| s.eq_ignore_ascii_case(key))
}

/// The first secret-named field of `objects`, at any depth, in document
/// order: the field's name as written.
pub fn find_secret_field<'a>(objects: impl IntoIterator<Item = &'a JsonObject>) -> Option<&'a str> {
    let mut stack: Vec<&Value> = Vec::new();
    for o in objects {
        if let Some(k) = o.keys().find(|k| is_secret(k)) {
            return Some(k);
        }
        stack.extend(o.values().rev());
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(m) => {
                    if let Some(k) = m.keys().find(|k| is_secret(k)) {
                        return Some(k);
                    }
                    stack.extend(m.values().rev());
                }
                Value::Array(a) => stack.extend(a.iter().rev()),
                _ => {}
            }
        }
    }
    None
}

/// Replaces the value of every secret-named field of `o`, at any depth,
/// with [`REDACTED`].
pub fn redact(o: &mut JsonObject) {
    let mut stack: Vec<&mut Value> = Vec::new();
    visit(o, &mut stack);
    redact_all(stack);
}

/// [`redact`] for any JSON value (a step's input or output, which need not
/// be an object).
pub fn redact_value(v: &mut Value) {
    redact_all(vec![v]);
}

fn visit<'v>(m: &'v mut JsonObject, stack: &mut Vec<&'v mut Value>) {
    for (k, v) in m.iter_mut() {
        if is_secret(k) {
            *v = Value::String(REDACTED.to_owned());
        } else {
            stack.push(v);
        }
    }
}

fn redact_all(mut stack: Vec<&mut Value>) {
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => visit(m, &mut stack),
            Value::Array(a) => stack.extend(a.iter_mut()),
            _ => {}
        }
    }
}

/// The rule [`names_a_credential`] applies, as the docs state it.
pub const CREDENTIAL_NAMES_RULE: &str = "A step's header names (`headers`) and query-parameter names (in `url`, `query` and `params`) never name a credential: `authorization`, `cookie`, and any name containing `key`, `token`, `secret`, `auth`, `password`, `session` or `signature`, in any case and with any separators (`X-API-Key`, `access_token`, `Proxy-Authorization`), is refused; a saved connection carries credentials, and readers of a workflow see such values as `[redacted]`.";

/// Words that make a header or query-parameter name a credential's
/// (`authorization` and `cookie` among them), compared after
/// [`normalise`].
const CREDENTIAL_WORDS: &[&str] =
    &["key", "token", "secret", "auth", "password", "session", "signature", "cookie"];

/// `name` lowercased, with everything but letters and digits dropped:
/// `X-Api_Key` and `x api key` read the same.
fn normalise(name: &str) -> String {
    name.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect()
}

/// Whether a header or query-parameter name carries a credential, by
/// [`CREDENTIAL_NAMES_RULE`].
pub fn names_a_credential(name: &str) -> bool {
    let n = normalise(name);
    CREDENTIAL_WORDS.iter().any(|w| n.contains(w))
}

/// The query-parameter names of `url` (after `?`, before `#`), as written.
fn query_names(url: &str) -> impl Iterator<Item = &str> {
    let query = url.split('#').next().unwrap_or("").split_once('?').map_or("", |(_, q)| q);
    query.split('&').filter(|p| !p.is_empty()).map(|p| p.split('=').next().unwrap_or(p))
}

/// The first header or query-parameter name of a step's `config` that
/// names a credential: `(field, name)`, the field being `headers`, `url`,
/// `query` or `params`.
pub fn find_credential_name(config: &JsonObject) -> Option<(&'static str, &str)> {
    if let Some(Value::Object(h)) = config.get("headers")
        && let Some(k) = h.keys().find(|k| names_a_credential(k))
    {
        return Some(("headers", k));
    }
    if let Some(Value::String(url)) = config.get("url") {
        if let Some(k) = query_names(url).find(|k| names_a_credential(k)) {
            return Some(("url", k));
        }
        for field in ["query", "params"] {
            if let Some(Value::Object(q)) = config.get(field)
                && let Some(k) = q.keys().find(|k| names_a_credential(k))
            {
                return Some((field, k));
            }
        }
    }
    None
}

/// Shows a step's `config` as [`find_credential_name`] would have refused
/// it: the values of credential-named headers and query parameters (in
/// `url`, `query`, `params`) read [`REDACTED`]. For what was stored
/// before the rule.
pub fn redact_credential_names(config: &mut JsonObject) {
    if let Some(Value::Object(h)) = config.get_mut("headers") {
        for (k, v) in h.iter_mut() {
            if names_a_credential(k) {
                *v = Value::String(REDACTED.to_owned());
            }
        }
    }
    let Some(Value::String(url)) = config.get("url") else { return };
    if query_names(url).any(names_a_credential) {
        let (head, fragment) = match url.split_once('#') {
            Some((h, f)) => (h, Some(f)),
            None => (url.as_str(), None),
        };
        let (base, query) = head.split_once('?').unwrap_or((head, ""));
        let pairs: Vec<String> = query
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if names_a_credential(k) => format!("{k}={REDACTED}"),
                _ => p.to_owned(),
            })
            .collect();
        let mut shown = format!("{base}?{}", pairs.join("&"));
        if let Some(f) = fragment {
            shown.push('#');
            shown.push_str(f);
        }
        config.insert("url".into(), Value::String(shown));
    }
    for field in ["query", "params"] {
        if let Some(Value::Object(q)) = config.get_mut(field) {
            for (k, v) in q.iter_mut() {
                if names_a_credential(k) {
                    *v = Value::String(REDACTED.to_owned());
                }
            }
        }
    }
}

/// How deep `o` nests (an object of scalars is 1) and roughly how many
/// bytes it takes as JSON, counting no further than just past `max_bytes`.
pub fn shape(o: &JsonObject, max_bytes: usize) -> (usize, usize) {
    let mut bytes = 2 + o.keys().map(|k| k.len() + 4).sum::<usize>();
    let mut depth = 1;
    let mut stack: Vec<(&Value, usize)> = o.values().map(|v| (v, 1)).collect();
    while let Some((v, d)) = stack.pop() {
        if bytes > max_bytes {
            break;
        }
        match v {
            Value::Object(m) => {
                depth = depth.max(d + 1);
                bytes += 2 + m.keys().map(|k| k.len() + 4).sum::<usize>();
                stack.extend(m.values().map(|v| (v, d + 1)));
            }
            Value::Array(a) => {
                depth = depth.max(d + 1);
                bytes += 2 + a.len();
                stack.extend(a.iter().map(|v| (v, d + 1)));
            }
            Value::String(s) => bytes += s.len() + 2,
            _ => bytes += 8,
        }
    }
    (depth, bytes)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn finds_secrets_at_any_depth_in_any_case() {
        let c = obj(json!({"a": [{"b": {"Api_Key": "x"}}], "token2": 1}));
        assert_eq!(find_secret_field([&c]), Some("Api_Key"));
        let p = obj(json!({"headers": {"Authorization": "Bearer x"}}));
        assert_eq!(find_secret_field([&obj(json!({"ok": 1})), &p]), Some("Authorization"));
        assert_eq!(find_secret_field([&obj(json!({"tokens": 3, "secretary": "x"}))]), None);
    }

    #[test]
    fn redacts_everywhere() {
        let mut c = obj(json!({"password": "p", "x": [{"TOKEN": "t", "keep": 1}]}));
        redact(&mut c);
        assert_eq!(
            Value::Object(c),
            json!({"password": "[redacted]", "x": [{"TOKEN": "[redacted]", "keep": 1}]})
        );
        let mut v = json!([{"secret": {"a": 1}}, "token", [{"deep": {"Api_Key": 2}}]]);
        redact_value(&mut v);
        assert_eq!(v, json!([{"secret": "[redacted]"}, "token", [{"deep": {"Api_Key": "[redacted]"}}]]));
    }

    #[test]
    fn shapes_are_bounded() {
        let mut v = json!(1);
        for _ in 0..999 {
            v = json!({ "a": v });
        }
        let o = obj(v);
        assert_eq!(shape(&o, usize::MAX).0, 999);
        let big = obj(json!({"s": "x".repeat(1_000_000)}));
        assert!(shape(&big, 1_000).1 > 1_000);
    }

    #[test]
    fn credential_names_are_found_by_rule() {
        for name in [
            "X-API-Key",
            "Api-Key",
            "X-Auth-Token",
            "X-Access-Token",
            "Cookie",
            "Proxy-Authorization",
            "access_token",
            "SESSION id",
            "x.signature",
            "client_secret",
            "PassWord",
        ] {
            assert!(names_a_credential(name), "{name}");
        }
        for name in ["Accept", "Content-Type", "X-Request-Id", "page", "q", "User-Agent"] {
            assert!(!names_a_credential(name), "{name}");
        }
        let c = obj(json!({"url": "https://a.example/x?page=2&api_key=abc#top", "headers": {"Accept": "x"}}));
        assert_eq!(find_credential_name(&c), Some(("url", "api_key")));
        let c = obj(json!({"url": "https://a.example/x", "params": {"Signature": "s"}}));
        assert_eq!(find_credential_name(&c), Some(("params", "Signature")));
        let c = obj(json!({"url": "https://a.example/x?q=1", "headers": {"X-Api-Key": "k"}}));
        assert_eq!(find_credential_name(&c), Some(("headers", "X-Api-Key")));
        assert_eq!(find_credential_name(&obj(json!({"url": "https://a.example/?q=token"}))), None);
    }

    #[test]
    fn stored_credential_values_are_shown_redacted() {
        let mut c = obj(json!({
            "url": "https://a.example/x?page=2&api_key=abc&sig#top",
            "headers": {"Accept": "x", "X-Auth-Token": "t"},
            "query": {"session": "s", "q": "1"}
        }));
        redact_credential_names(&mut c);
        assert_eq!(
            Value::Object(c),
            json!({
                "url": "https://a.example/x?page=2&api_key=[redacted]&sig#top",
                "headers": {"Accept": "x", "X-Auth-Token": "[redacted]"},
                "query": {"session": "[redacted]", "q": "1"}
            })
        );
    }
}
