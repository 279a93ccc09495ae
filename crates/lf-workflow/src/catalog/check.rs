//! Checking a node's config against its type (the validator's
//! CONFIG_INVALID), and normalizing it for the runner.

use serde_json::{Map, Value};

use super::spec::{ConfigField, FieldKind, NodeTypeSpec};
use crate::condition::Condition;
use crate::json;
use crate::path::Pick;

/// Most elements of a list field, entries of a map field, form fields or
/// switch cases.
const MAX_ITEMS: usize = 100;
/// Most characters of a URL.
const MAX_URL_CHARS: usize = 2_048;

/// One thing wrong with a config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigProblem {
    /// The config key (or `connector`).
    pub field: String,
    pub message: String,
    /// A key the type does not know: a warning, not an error (the value is
    /// ignored at run time).
    pub unknown: bool,
}

fn problem(field: &str, message: String) -> ConfigProblem {
    ConfigProblem { field: field.to_owned(), message, unknown: false }
}

/// Everything wrong with `config` for `spec`: a required field missing,
/// a field of the wrong kind or out of range, an option outside its list,
/// a field given twice (under its name and an alias), a rule across
/// fields broken, and (as `unknown`) keys the type does not know.
/// `has_connector` says whether the node names a saved connection (some
/// rules accept one in place of a field). Linear in the size of `config`.
pub fn check_config(
    spec: &NodeTypeSpec,
    config: &Map<String, Value>,
    has_connector: bool,
) -> Vec<ConfigProblem> {
    let mut out = Vec::new();
    for f in &spec.fields {
        let mut present =
            std::iter::once(f.key).chain(f.aliases.iter().copied()).filter(|k| config.contains_key(*k));
        let Some(first) = present.next() else {
            if f.required {
                out.push(problem(f.key, format!("{} ({}) is required: {}", f.key, f.kind, f.description)));
            }
            continue;
        };
        if let Some(second) = present.next() {
            out.push(problem(f.key, format!("{first} and {second} are the same field: give only {}", f.key)));
            continue;
        }
        if let Err(why) = check_value(f, &config[first]) {
            out.push(problem(f.key, format!("{first} {why}")));
        }
    }
    for k in config.keys() {
        if spec.field(k).is_none() {
            let known: Vec<&str> = spec.fields.iter().map(|f| f.key).collect();
            let hint = if known.is_empty() {
                format!("{} takes no config", spec.node_type)
            } else {
                format!("{} knows {}", spec.node_type, known.join(", "))
            };
            out.push(ConfigProblem {
                field: k.clone(),
                message: format!(
                    "{} is not a config field of {}; it is ignored ({hint})",
                    lf_core::clip(k, 60),
                    spec.node_type
                ),
                unknown: true,
            });
        }
    }
    if out.iter().all(|p| p.unknown)
        && let Some(rule) = spec.rule
        && let Some((field, message)) = rule(&canonical(spec, config), has_connector)
    {
        out.push(problem(field, message));
    }
    out
}

/// `config` with aliases renamed to their field's key and absent optional
/// fields set to their defaults: what the runner reads. Unknown keys are
/// kept as they are.
pub fn normalize_config(spec: &NodeTypeSpec, config: &Map<String, Value>) -> Map<String, Value> {
    let mut out = canonical(spec, config);
    for f in &spec.fields {
        if let (false, Some(d)) = (out.contains_key(f.key), &f.default) {
            out.insert(f.key.to_owned(), d.clone());
        }
    }
    out
}

/// `config` with aliases renamed to their field's key (a key given under
/// its own name wins over an alias).
fn canonical(spec: &NodeTypeSpec, config: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in config {
        let key = spec.field(k).map_or(k.as_str(), |f| f.key);
        if !out.contains_key(key) || key == k {
            out.insert(key.to_owned(), v.clone());
        }
    }
    out
}

fn check_value(f: &ConfigField, v: &Value) -> Result<(), String> {
    let kind = f.kind;
    let wrong = || Err(format!("must be a {kind}, got {}", json::kind(v)));
    match kind {
        FieldKind::String | FieldKind::Template => match v.as_str() {
            Some("") if f.required => Err("must not be empty".into()),
            Some(_) => Ok(()),
            None => wrong(),
        },
        FieldKind::Number | FieldKind::Integer => {
            let Some(n) = v.as_f64() else { return wrong() };
            if kind == FieldKind::Integer && !(v.is_i64() || v.is_u64()) {
                return Err(format!("must be a whole number, got {n}"));
            }
            match (f.min, f.max) {
                (Some(lo), Some(hi)) if n < lo || n > hi => {
                    Err(format!("must be between {lo} and {hi}, got {n}"))
                }
                _ => Ok(()),
            }
        }
        FieldKind::Boolean => {
            if v.is_boolean() {
                Ok(())
            } else {
                wrong()
            }
        }
        FieldKind::Select => match v.as_str() {
            Some(s) if f.options.contains(&s) => Ok(()),
            Some(s) => {
                Err(format!("must be one of {}; got \"{}\"", f.options.join(", "), lf_core::clip(s, 60)))
            }
            None => wrong(),
        },
        FieldKind::StringList => strings(v).map(|_| ()),
        FieldKind::EmailList => {
            let list = match v {
                Value::String(s) => vec![s.as_str()],
                _ => strings(v)?,
            };
            match list.iter().find(|a| !looks_like_email(a)) {
                Some(bad) => Err(format!(
                    "must hold e-mail addresses such as team@example.com; \"{}\" is not one",
                    lf_core::clip(bad, 60)
                )),
                None if list.is_empty() => Err("must name at least one address".into()),
                None => Ok(()),
            }
        }
        FieldKind::Object => {
            if v.is_object() {
                Ok(())
            } else {
                wrong()
            }
        }
        FieldKind::Json => Ok(()),
        FieldKind::JsonPath => match v.as_str() {
            Some(s) => Pick::parse(f.key, s).map(|_| ()).map_err(|e| strip_field(f.key, e.message())),
            None => wrong(),
        },
        FieldKind::Condition => {
            Condition::parse(v).map(|_| ()).map_err(|e| format!("is not a valid condition: {e}"))
        }
        FieldKind::Cron => match v.as_str() {
            // Our own reading first (its messages name the field), then the
            // scheduler's, so that what validates also schedules.
            Some(s) => check_cron(s).and_then(|()| crate::schedule::check_fires(s)),
            None => wrong(),
        },
        FieldKind::TimeZone => match v.as_str() {
            Some(s) => crate::schedule::parse_zone(s).map(|_| ()),
            None => wrong(),
        },
        FieldKind::Url => match v.as_str() {
            Some(s) => check_url(s),
            None => wrong(),
        },
        FieldKind::Uuid => match v.as_str() {
            Some(s) => lf_core::parse_uuid(f.key, s).map(|_| ()).map_err(|e| strip_field(f.key, e.message())),
            None => wrong(),
        },
        FieldKind::Label => match v.as_str() {
            Some(s) => {
                lf_core::LabelName::parse(f.key, s).map(|_| ()).map_err(|e| strip_field(f.key, e.message()))
            }
            None => wrong(),
        },
        FieldKind::DateTime => match v.as_str() {
            Some(s) if chrono::DateTime::parse_from_rfc3339(s).is_ok() => Ok(()),
            Some(s) => Err(format!(
                "must be an RFC 3339 instant such as 2026-06-01T09:00:00Z, got \"{}\"",
                lf_core::clip(s, 60)
            )),
            None => wrong(),
        },
        FieldKind::FormFields => check_form_fields(v),
        FieldKind::SwitchCases => check_cases(v),
        FieldKind::StringMap | FieldKind::PathMap => {
            let Some(m) = v.as_object() else { return wrong() };
            if m.len() > MAX_ITEMS {
                return Err(format!("may have at most {MAX_ITEMS} entries"));
            }
            for (k, item) in m {
                let Some(s) = item.as_str() else {
                    return Err(format!(
                        "[\"{}\"] must be a string, got {}",
                        lf_core::clip(k, 60),
                        json::kind(item)
                    ));
                };
                if kind == FieldKind::PathMap {
                    Pick::parse(k, s)
                        .map_err(|e| format!("[\"{}\"]: {}", lf_core::clip(k, 60), e.message()))?;
                }
            }
            Ok(())
        }
    }
}

fn strip_field(field: &str, message: &str) -> String {
    message.strip_prefix(field).map_or_else(|| message.to_owned(), |m| m.trim_start().to_owned())
}

fn strings(v: &Value) -> Result<Vec<&str>, String> {
    let Some(a) = v.as_array() else {
        return Err(format!("must be an array of strings, got {}", json::kind(v)));
    };
    if a.len() > MAX_ITEMS {
        return Err(format!("may have at most {MAX_ITEMS} elements"));
    }
    a.iter()
        .enumerate()
        .map(|(i, s)| s.as_str().ok_or_else(|| format!("[{i}] must be a string, got {}", json::kind(s))))
        .collect()
}

fn looks_like_email(s: &str) -> bool {
    let Some((local, domain)) = s.trim().rsplit_once('@') else { return false };
    !local.is_empty() && domain.contains('.') && !domain.starts_with('.') && !s.contains(char::is_whitespace)
}

fn check_url(s: &str) -> Result<(), String> {
    let rest = s.strip_prefix("https://").or_else(|| s.strip_prefix("http://"));
    match rest {
        _ if s.chars().nth(MAX_URL_CHARS).is_some() => {
            Err(format!("must be at most {MAX_URL_CHARS} characters"))
        }
        Some(r) if !r.is_empty() && !r.starts_with('/') && !s.contains(char::is_whitespace) => Ok(()),
        _ => Err(format!("must be an http:// or https:// URL with a host, got \"{}\"", lf_core::clip(s, 60))),
    }
}

/// Five fields (minute, hour, day of month, month, day of week), each a
/// list of `*`, `?`, values, ranges and steps within the field's bounds.
/// Month and weekday names (`JAN`, `MON`) and the day-of-month and weekday
/// forms `L`, `W` and `#` are let through for the scheduler to read.
fn check_cron(s: &str) -> Result<(), String> {
    const FIELDS: [(&str, u32, u32); 5] = [
        ("minute", 0, 59),
        ("hour", 0, 23),
        ("day of month", 1, 31),
        ("month", 1, 12),
        ("day of week", 0, 7),
    ];
    let parts: Vec<&str> = s.split_whitespace().collect();
    if parts.len() != 5 {
        return Err(format!(
            "must be a five-field cron expression (minute hour day-of-month month day-of-week) such as \"0 9 * * 1\"; got {} field(s)",
            parts.len()
        ));
    }
    for (part, (name, lo, hi)) in parts.iter().zip(FIELDS) {
        for item in part.split(',') {
            let (range, step) = match item.split_once('/') {
                Some((r, st)) => (r, Some(st)),
                None => (item, None),
            };
            let bad =
                || format!("has a bad {name} field \"{}\" (allowed {lo}-{hi})", lf_core::clip(part, 40));
            if let Some(st) = step
                && !st.parse::<u32>().is_ok_and(|n| n >= 1 && n <= hi.max(1))
            {
                return Err(bad());
            }
            if range == "*" || range == "?" {
                continue;
            }
            if range.bytes().any(|b| b.is_ascii_alphabetic() || b == b'#') {
                // Names and L/W/# forms: letters and digits only, bounded.
                if range.len() > 8
                    || !range.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'#' || b == b'-')
                {
                    return Err(bad());
                }
                continue;
            }
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            let in_bounds = |t: &str| t.parse::<u32>().is_ok_and(|n| (lo..=hi).contains(&n));
            if !in_bounds(a) || !in_bounds(b) {
                return Err(bad());
            }
        }
    }
    Ok(())
}

/// `[{"name": "email", "kind": "string", "required": true, "options": [..], "description": ".."}]`.
fn check_form_fields(v: &Value) -> Result<(), String> {
    const KINDS: [&str; 6] = ["string", "number", "integer", "boolean", "select", "json"];
    let Some(a) = v.as_array().filter(|a| !a.is_empty() && a.len() <= MAX_ITEMS) else {
        return Err(format!(
            "must be an array of 1 to {MAX_ITEMS} fields such as [{{\"name\": \"email\", \"kind\": \"string\"}}]"
        ));
    };
    let mut names = std::collections::HashSet::new();
    for (i, f) in a.iter().enumerate() {
        let Some(m) = f.as_object() else { return Err(format!("[{i}] must be an object")) };
        let name = m.get("name").and_then(Value::as_str).unwrap_or("");
        let name_ok = !name.is_empty()
            && name.len() <= 64
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(format!("[{i}].name must be 1 to 64 characters of letters, digits, _ and -"));
        }
        if !names.insert(name) {
            return Err(format!("[{i}].name \"{name}\" is declared twice"));
        }
        let kind = m.get("kind").and_then(Value::as_str).unwrap_or("string");
        if !KINDS.contains(&kind) {
            return Err(format!("[{i}].kind must be one of {}", KINDS.join(", ")));
        }
        if m.get("required").is_some_and(|r| !r.is_boolean()) {
            return Err(format!("[{i}].required must be a boolean"));
        }
        let options = m.get("options").map(strings).transpose().map_err(|e| format!("[{i}].options {e}"))?;
        if kind == "select" && options.is_none_or(|o| o.is_empty()) {
            return Err(format!("[{i}] is a select: give its options"));
        }
        if let Some(k) = m.keys().find(|k| {
            !matches!(k.as_str(), "name" | "kind" | "required" | "options" | "description" | "default")
        }) {
            return Err(format!("[{i}] has an unknown key \"{}\"", lf_core::clip(k, 40)));
        }
    }
    Ok(())
}

/// `[{"name": "high", "when": <condition>}]`: names are output fields, so
/// they follow step keys' rules.
fn check_cases(v: &Value) -> Result<(), String> {
    let Some(a) = v.as_array().filter(|a| !a.is_empty() && a.len() <= MAX_ITEMS) else {
        return Err(format!(
            "must be an array of 1 to {MAX_ITEMS} cases such as [{{\"name\": \"high\", \"when\": {{\"path\": \"$.score\", \"op\": \"gte\", \"value\": 80}}}}]"
        ));
    };
    let mut names = std::collections::HashSet::new();
    for (i, c) in a.iter().enumerate() {
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        crate::model::StepKey::parse("name", name)
            .map_err(|_| format!("[{i}].name must be a lowercase name such as high or needs_review"))?;
        if !names.insert(name) {
            return Err(format!("[{i}].name \"{name}\" is used twice"));
        }
        let when =
            c.get("when").ok_or_else(|| format!("[{i}].when is required: the condition of this case"))?;
        Condition::parse(when).map_err(|e| format!("[{i}].when: {e}"))?;
        if c.as_object().is_some_and(|m| m.len() > 2) {
            return Err(format!("[{i}] takes only name and when"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cron_expressions() {
        for ok in [
            "0 9 * * 1",
            "*/15 * * * *",
            "0 0 1,15 * *",
            "30 8 * JAN-MAR MON-FRI",
            "0 12 L * *",
            "0 0 * * 5#2",
            "5-10/5 0-23 ? * 0-7",
        ] {
            assert!(check_cron(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "0 9 * *",
            "0 9 * * 1 2026",
            "60 * * * *",
            "* 24 * * *",
            "* * 0 * *",
            "*/0 * * * *",
            "a$ * * * *",
            "1-99 * * * *",
        ] {
            assert!(check_cron(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn urls_and_emails() {
        assert!(check_url("https://example.com/hook").is_ok());
        assert!(check_url("http://127.0.0.1:8080/x?[[id]]").is_ok());
        for bad in ["ftp://x", "https://", "https:///path", "example.com", "https://a b"] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
        assert!(
            looks_like_email("team@example.com") && !looks_like_email("team") && !looks_like_email("a@b")
        );
    }
}
