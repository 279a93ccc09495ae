//! What the Eval tools share: a dataset as answered, cases as given.

use lf_core::{LfError, LfResult};
use lf_eval::dataset::{Case, CaseSource, Dataset, DatasetId, DatasetVersion};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A dataset by id.
pub fn dataset_id(s: &str) -> LfResult<DatasetId> {
    DatasetId::parse("dataset_id", s)
}

/// Who may read a dataset besides its owner.
#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VisibilityIn {
    Private,
    Community,
    Public,
}

impl VisibilityIn {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::Community => "community",
            Self::Public => "public",
        }
    }
}

/// The most characters of a call's `jsonl` or `csv` text.
pub const MAX_SOURCE_CHARS: usize = 8_000_000;

/// The cases of a call from exactly one of its `cases`, `jsonl` and `csv`
/// arguments, each text at most [`MAX_SOURCE_CHARS`].
pub fn case_source(
    cases: Option<Vec<Value>>,
    jsonl: Option<String>,
    csv: Option<String>,
) -> LfResult<CaseSource> {
    for (field, text) in [("jsonl", &jsonl), ("csv", &csv)] {
        if let Some(t) = text {
            lf_core::check_length(field, t, 1, MAX_SOURCE_CHARS)?;
        }
    }
    match (cases, jsonl, csv) {
        (Some(c), None, None) => Ok(CaseSource::Inline(c)),
        (None, Some(j), None) => Ok(CaseSource::Jsonl(j)),
        (None, None, Some(c)) => Ok(CaseSource::Csv(c)),
        _ => Err(LfError::invalid_argument(
            "Give the cases in exactly one of cases (a list of objects), jsonl (one object a line) or csv (a header, then a case a row).",
        )
        .with_field("cases")),
    }
}

/// A dataset as of a version.
#[derive(Serialize, JsonSchema)]
pub struct DatasetOut {
    pub dataset_id: String,
    pub name: String,
    pub description: String,
    pub owner_id: String,
    pub visibility: &'static str,
    /// The latest version.
    pub latest_version: u32,
    /// Cases in the latest version.
    pub case_count: u32,
    pub created_at: String,
    pub updated_at: String,
    pub archived_at: Option<String>,
}

impl DatasetOut {
    pub fn of(d: Dataset) -> Self {
        Self {
            dataset_id: d.id.to_string(),
            name: d.name.into_string(),
            description: d.description.into_string(),
            owner_id: d.owner.to_string(),
            visibility: d.visibility.as_str(),
            latest_version: d.version,
            case_count: d.case_count,
            created_at: d.created_at.to_rfc3339(),
            updated_at: d.updated_at.to_rfc3339(),
            archived_at: d.archived_at.map(|t| t.to_rfc3339()),
        }
    }
}

/// One immutable version: what an experiment pins.
#[derive(Serialize, JsonSchema)]
pub struct VersionOut {
    pub version: u32,
    pub case_count: u32,
    pub created_at: String,
    /// Who made it (an AI Lenser's id if one).
    pub created_by: String,
}

impl VersionOut {
    pub fn of(v: &DatasetVersion) -> Self {
        Self {
            version: v.version,
            case_count: v.case_count,
            created_at: v.created_at.to_rfc3339(),
            created_by: v.created_by.to_string(),
        }
    }
}

/// What a write answers: the dataset and the version it made.
#[derive(Serialize, JsonSchema)]
pub struct WrittenOut {
    pub dataset: DatasetOut,
    pub version: VersionOut,
}

impl WrittenOut {
    pub fn of((d, v): (Dataset, DatasetVersion)) -> Self {
        Self { version: VersionOut::of(&v), dataset: DatasetOut::of(d) }
    }
}

/// A case: its place, what it asks and what it checks.
#[derive(Serialize, JsonSchema)]
pub struct CaseOut {
    /// 1, 2, … in the dataset.
    pub position: u32,
    /// The version that added it.
    pub added_in: u32,
    /// {inputs} or {prompt}, with expected, assertions, tags, metadata when set.
    pub case: Value,
}

impl CaseOut {
    pub fn of(c: Case) -> Self {
        Self { position: c.position, added_in: c.added_in, case: c.to_json() }
    }
}
