//! A dataset, its versions and its cases, and the checks of what a case is
//! given.

use lf_core::{Description, ErrorCode, LenserId, LfError, Timestamp};
use serde_json::{Map, Value};

/// A JSON object, as a case keeps its inputs, assertions and metadata.
pub type JsonObject = Map<String, Value>;

lf_core::id_newtype!(
    /// A dataset: a named, versioned list of cases.
    DatasetId
);

lf_core::text_newtype!(
    /// A dataset's name: 1 to 100 characters after trimming, unique among
    /// its owner's datasets that are not archived.
    DatasetName, "name", 1, 100, trim = true
);

lf_core::word_enum!(
    /// Who may read a dataset besides its owner: the tiers of lenses.
    Visibility, "visibility", [
        /// Its owner only.
        Private = "private",
        /// Every signed-in lenser.
        Community = "community",
        /// Everyone.
        Public = "public",
    ]
);

/// Most cases one call reads (create or add).
pub const MAX_CASES_PER_CALL: usize = 10_000;
/// Most cases a dataset holds, over all its versions.
pub const MAX_CASES_PER_DATASET: u32 = 100_000;
/// Longest prompt, in characters.
const MAX_PROMPT_CHARS: usize = 100_000;
/// Most bytes of a case's JSON.
const MAX_CASE_BYTES: usize = 200_000;
/// Most assertions of a case.
const MAX_ASSERTIONS: usize = 50;
/// Most tags of a case, and the longest one.
const MAX_TAGS: usize = 20;
const MAX_TAG_CHARS: usize = 64;

/// A saved dataset, as of its latest version.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    pub id: DatasetId,
    pub owner: LenserId,
    pub name: DatasetName,
    pub description: Description,
    pub visibility: Visibility,
    /// Its latest version: 1 at creation, one more each time cases are added.
    pub version: u32,
    /// How many cases its latest version holds.
    pub case_count: u32,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Set once archived: no longer listed nor changed; its versions stay
    /// readable by whom could read them, so what pinned one still reads it.
    pub archived_at: Option<Timestamp>,
}

/// One immutable version of a dataset: the first `case_count` cases.
#[derive(Clone, Debug, PartialEq)]
pub struct DatasetVersion {
    pub dataset: DatasetId,
    pub version: u32,
    pub case_count: u32,
    pub created_at: Timestamp,
    /// Who made it: the lenser, or the AI Lenser acting for its owner.
    pub created_by: LenserId,
    /// The AI Lenser that made it, when one did.
    pub agent: Option<LenserId>,
}

/// What a case asks: a lens's parameter values, or a prompt.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseInput {
    /// Parameter values of the lens an experiment sends (names to values).
    Inputs(JsonObject),
    /// A prompt sent as it is.
    Prompt(String),
}

/// One case of a dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// 1, 2, … in its dataset; 0 until it is saved.
    pub position: u32,
    /// The version that added it; 0 until it is saved.
    pub added_in: u32,
    pub input: CaseInput,
    /// What a good answer is: text (a JSON string) or any other JSON value.
    pub expected: Option<Value>,
    /// Checks of an answer, each an object with a `type`, kept as given.
    pub assertions: Vec<JsonObject>,
    pub tags: Vec<String>,
    pub metadata: JsonObject,
}

impl Case {
    /// A case from its JSON object, checked: `inputs` (an object) or
    /// `prompt` (text), and optionally `expected`, `assertions`, `tags`,
    /// `metadata`. The error says what is wrong, for the caller to prefix
    /// with the case's place.
    pub fn from_json(v: Value) -> Result<Case, String> {
        let size = v.to_string().len();
        if size > MAX_CASE_BYTES {
            return Err(format!("a case takes at most {MAX_CASE_BYTES} bytes of JSON; this one has {size}"));
        }
        let Value::Object(o) = v else {
            return Err(format!("a case must be a JSON object, not {}", kind(&v)));
        };
        let mut inputs = None;
        let mut prompt = None;
        let mut case = Case {
            position: 0,
            added_in: 0,
            input: CaseInput::Prompt(String::new()),
            expected: None,
            assertions: Vec::new(),
            tags: Vec::new(),
            metadata: JsonObject::new(),
        };
        for (k, v) in o {
            match (k.as_str(), v) {
                (_, Value::Null) => {}
                ("inputs", Value::Object(i)) => inputs = Some(i),
                ("inputs", v) => {
                    return Err(format!("inputs must be an object of parameter values, not {}", kind(&v)));
                }
                ("prompt", Value::String(p)) => prompt = Some(p),
                ("prompt", v) => return Err(format!("prompt must be text, not {}", kind(&v))),
                ("expected", v) => case.expected = Some(v),
                ("assertions", Value::Array(items)) => case.assertions = assertions(items)?,
                ("assertions", v) => {
                    return Err(format!("assertions must be a list of objects, not {}", kind(&v)));
                }
                ("tags", Value::Array(items)) => case.tags = tags(items)?,
                ("tags", v) => return Err(format!("tags must be a list of text, not {}", kind(&v))),
                ("metadata", Value::Object(m)) => case.metadata = m,
                ("metadata", v) => return Err(format!("metadata must be an object, not {}", kind(&v))),
                (other, _) => {
                    return Err(format!(
                        "a case has no field {}: it takes inputs or prompt, expected, assertions, tags and metadata",
                        LfError::excerpt(other)
                    ));
                }
            }
        }
        case.input = match (inputs, prompt) {
            (Some(_), Some(_)) => return Err("a case takes inputs or prompt, not both".to_owned()),
            (None, None) => {
                return Err("a case needs inputs (the lens's parameter values) or prompt (text)".to_owned());
            }
            (Some(i), None) => CaseInput::Inputs(i),
            (None, Some(p)) => {
                if p.trim().is_empty() || p.chars().take(MAX_PROMPT_CHARS + 1).count() > MAX_PROMPT_CHARS {
                    return Err(format!("prompt must be 1 to {MAX_PROMPT_CHARS} characters, not blank"));
                }
                if p.contains('\0') {
                    return Err("prompt must not contain NUL (U+0000) characters".to_owned());
                }
                CaseInput::Prompt(p)
            }
        };
        Ok(case)
    }

    /// The case as JSON, as [`Case::from_json`] reads it.
    pub fn to_json(&self) -> Value {
        let mut o = JsonObject::new();
        match &self.input {
            CaseInput::Inputs(i) => o.insert("inputs".into(), Value::Object(i.clone())),
            CaseInput::Prompt(p) => o.insert("prompt".into(), Value::String(p.clone())),
        };
        if let Some(e) = &self.expected {
            o.insert("expected".into(), e.clone());
        }
        if !self.assertions.is_empty() {
            o.insert("assertions".into(), self.assertions.iter().cloned().map(Value::Object).collect());
        }
        if !self.tags.is_empty() {
            o.insert("tags".into(), self.tags.iter().cloned().map(Value::String).collect());
        }
        if !self.metadata.is_empty() {
            o.insert("metadata".into(), Value::Object(self.metadata.clone()));
        }
        Value::Object(o)
    }
}

fn assertions(items: Vec<Value>) -> Result<Vec<JsonObject>, String> {
    if items.len() > MAX_ASSERTIONS {
        return Err(format!(
            "a case takes at most {MAX_ASSERTIONS} assertions; this one has {}",
            items.len()
        ));
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Object(o)
                if o.get("type").and_then(Value::as_str).is_some_and(|t| !t.trim().is_empty()) =>
            {
                Ok(o)
            }
            Value::Object(_) => Err(format!("assertions[{i}] needs a type (text), such as \"contains\"")),
            v => Err(format!("assertions[{i}] must be an object with a type, not {}", kind(&v))),
        })
        .collect()
}

fn tags(items: Vec<Value>) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for (i, v) in items.into_iter().enumerate() {
        let Value::String(t) = v else {
            return Err(format!("tags[{i}] must be text, not {}", kind(&v)));
        };
        let t = t.trim();
        if t.is_empty() || t.chars().count() > MAX_TAG_CHARS || t.chars().any(char::is_control) {
            return Err(format!(
                "tags[{i}] must be 1 to {MAX_TAG_CHARS} characters without control characters"
            ));
        }
        if !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    }
    if out.len() > MAX_TAGS {
        return Err(format!("a case takes at most {MAX_TAGS} tags; this one has {}", out.len()));
    }
    Ok(out)
}

/// What a JSON value is, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The NOT_FOUND of a dataset the caller cannot read (missing, or not the
/// caller's to read: the same answer).
pub fn dataset_not_found(id: &str) -> LfError {
    LfError::new(
        ErrorCode::NotFound,
        format!(
            "No dataset {} you can read. list_datasets shows yours and the shared ones.",
            LfError::excerpt(id)
        ),
    )
    .with_field("dataset_id")
}

/// The CONFLICT of adding to a dataset whose latest version moved on.
pub fn dataset_moved() -> LfError {
    LfError::conflict("Cases were added to this dataset meanwhile: read it again (get_dataset) and retry.")
        .with_field("dataset_id")
}

/// The CONFLICT of changing an archived dataset.
pub fn dataset_archived() -> LfError {
    LfError::conflict(
        "This dataset is archived: its versions stay readable, but it takes no more cases. Create a new one.",
    )
    .with_field("dataset_id")
}

/// The CONFLICT of a name the owner already gives another dataset.
pub fn dataset_taken(name: &DatasetName) -> LfError {
    LfError::conflict(format!(
        "You already have a dataset named {}. Pick another name, or add cases to that one.",
        LfError::excerpt(name.as_str())
    ))
    .with_field("name")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_case_round_trips_and_is_checked() {
        let v = json!({"inputs": {"topic": "tides"}, "expected": {"a": 1}, "assertions": [{"type": "contains", "value": "moon"}], "tags": ["x", " x ", "y"], "metadata": {"k": 1}});
        let c = Case::from_json(v).unwrap();
        assert_eq!(c.tags, ["x", "y"]);
        assert_eq!(Case::from_json(c.to_json()).unwrap(), c);
        let p = Case::from_json(json!({"prompt": "hi", "expected": "hello"})).unwrap();
        assert_eq!(p.input, CaseInput::Prompt("hi".into()));
        assert_eq!(p.expected, Some(json!("hello")));
        for (bad, says) in [
            (json!({}), "needs inputs"),
            (json!({"prompt": "a", "inputs": {}}), "not both"),
            (json!({"prompt": " "}), "not blank"),
            (json!({"inputs": []}), "inputs must be an object"),
            (json!({"prompt": "a", "assertions": [{"value": 1}]}), "assertions[0] needs a type"),
            (json!({"prompt": "a", "assertions": [1]}), "assertions[0] must be an object"),
            (json!({"prompt": "a", "tags": [1]}), "tags[0] must be text"),
            (json!({"prompt": "a", "extra": 1}), "no field"),
            (json!([1]), "must be a JSON object"),
        ] {
            let e = Case::from_json(bad.clone()).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
