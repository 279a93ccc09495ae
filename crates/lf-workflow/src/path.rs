//! Picks: which part of a JSON value flows on. A connection's `output_key`,
//! a condition's `path` and the path fields of the data nodes are all one
//! of three things: the whole value (`output`), a top-level field by name,
//! or an RFC 9535 JSONPath starting with `$` (parsed with `serde_json_path`).

use std::borrow::Cow;

use lf_core::{LfError, LfResult};
use serde_json::Value;
use serde_json_path::JsonPath;

/// Most characters of a pick.
pub const MAX_PICK_CHARS: usize = 500;

/// The word that picks the whole value: a connection with no `output_key`
/// or with `output` carries the upstream node's whole output.
pub const WHOLE: &str = "output";

/// A part of a JSON value. Compared by what was written.
#[derive(Clone, Debug)]
pub enum Pick {
    /// All of it.
    Whole,
    /// The top-level field of this name (absent when the value is not an
    /// object or has no such field).
    Field(String),
    /// Every node a JSONPath selects.
    Path { text: String, path: JsonPath },
}

impl PartialEq for Pick {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Pick {
    /// `output` → the whole value; `$…` → a JSONPath; anything else → a
    /// top-level field. `field` names the argument in errors.
    pub fn parse(field: &str, s: &str) -> LfResult<Self> {
        // A blank name picks nothing anyone meant.
        if s.trim().is_empty() || s.chars().nth(MAX_PICK_CHARS).is_some() {
            return Err(LfError::invalid_argument(format!(
                "{field} must be 1 to {MAX_PICK_CHARS} characters: a field name, `output` for the whole value, or a JSONPath such as $.items[0].title"
            ))
            .with_field(field));
        }
        if s == WHOLE {
            return Ok(Pick::Whole);
        }
        if s.starts_with('$') {
            return parse_path(field, s).map(|path| Pick::Path { text: s.to_owned(), path });
        }
        lf_core::no_nul(field, s)?;
        Ok(Pick::Field(s.to_owned()))
    }

    /// What was written (`output` for the whole value).
    pub fn as_str(&self) -> &str {
        match self {
            Pick::Whole => WHOLE,
            Pick::Field(f) => f,
            Pick::Path { text, .. } => text,
        }
    }

    /// The top-level field this pick names, if it is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            Pick::Field(f) => Some(f),
            _ => None,
        }
    }

    /// Every node this pick selects in `v`, in document order: at most one
    /// for the whole value or a field, any number for a JSONPath.
    pub fn nodes<'v>(&self, v: &'v Value) -> Vec<&'v Value> {
        match self {
            Pick::Whole => vec![v],
            Pick::Field(f) => v.get(f).into_iter().collect(),
            Pick::Path { path, .. } => path.query(v).all(),
        }
    }

    /// The picked part of `v`: `None` when nothing is there (a missing
    /// field, a JSONPath selecting nothing). A JSONPath selecting one node
    /// gives that node; several give an array of them in document order.
    pub fn pick<'v>(&self, v: &'v Value) -> Option<Cow<'v, Value>> {
        match self {
            Pick::Whole => Some(Cow::Borrowed(v)),
            Pick::Field(f) => v.get(f).map(Cow::Borrowed),
            Pick::Path { path, .. } => {
                let nodes = path.query(v).all();
                match nodes.len() {
                    0 => None,
                    1 => Some(Cow::Borrowed(nodes[0])),
                    _ => Some(Cow::Owned(Value::Array(nodes.into_iter().cloned().collect()))),
                }
            }
        }
    }
}

/// Parses an RFC 9535 JSONPath (it must start with `$`).
pub fn parse_path(field: &str, s: &str) -> LfResult<JsonPath> {
    if s.chars().nth(MAX_PICK_CHARS).is_some() {
        return Err(LfError::invalid_argument(format!(
            "{field} must be at most {MAX_PICK_CHARS} characters"
        ))
        .with_field(field));
    }
    JsonPath::parse(s).map_err(|e| {
        LfError::invalid_argument(format!(
            "{field} is not a valid JSONPath ({}): {}. Write one such as $.items[0].title or $.score (RFC 9535).",
            LfError::excerpt(s),
            lf_core::clip(&e.to_string(), 200)
        ))
        .with_field(field)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn three_kinds() {
        let v = json!({"text": "hi", "items": [{"t": 1}, {"t": 2}], "output": 5});
        let p = |s: &str| Pick::parse("output_key", s).unwrap();
        assert_eq!(p("output").pick(&v).unwrap().as_ref(), &v);
        assert_eq!(p("text").pick(&v).unwrap().as_ref(), &json!("hi"));
        assert!(p("missing").pick(&v).is_none());
        assert_eq!(p("$.items[1].t").pick(&v).unwrap().as_ref(), &json!(2));
        assert_eq!(p("$.items[*].t").pick(&v).unwrap().as_ref(), &json!([1, 2]));
        assert_eq!(p("$.output").pick(&v).unwrap().as_ref(), &json!(5), "a field called output, by path");
        assert!(p("$.nothing").pick(&v).is_none());
        assert_eq!(p("$.items"), p("$.items"));
    }

    #[test]
    fn bad_paths_say_what_to_write() {
        for bad in ["$.", "$[", "$..", "$.a[?@.b ==]"] {
            let e = Pick::parse("output_key", bad).unwrap_err();
            assert!(e.message().contains("not a valid JSONPath"), "{bad}: {}", e.message());
        }
        assert!(Pick::parse("output_key", "").is_err());
        assert!(Pick::parse("output_key", " \t ").is_err(), "a blank name is no field");
        assert!(Pick::parse("output_key", &"a".repeat(501)).is_err());
    }
}
