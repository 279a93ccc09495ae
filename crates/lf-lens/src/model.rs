//! Lens types. Every value is parsed once at the edge and valid from then on.

use std::fmt;

use lf_core::{
    LabelName, LensId, LenserId, LfError, LfResult, ParamId, RunId, Timestamp, VersionId, WorkflowId, no_nul,
};

use crate::template::TypeHint;

/// Who may read a lens besides its owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// Everyone.
    Public,
    /// Every signed-in lenser.
    Community,
    /// The owner only.
    Private,
}

impl Visibility {
    pub const ALL: [Visibility; 3] = [Visibility::Public, Visibility::Community, Visibility::Private];

    pub const fn as_str(self) -> &'static str {
        match self {
            Visibility::Public => "public",
            Visibility::Community => "community",
            Visibility::Private => "private",
        }
    }

    pub fn parse(s: &str) -> LfResult<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| {
            LfError::invalid_argument(format!(
                "visibility must be one of public, community, private; got {}",
                LfError::excerpt(s)
            ))
            .with_field("visibility")
        })
    }
}

/// Publication status of a lens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LensStatus {
    Draft,
    Published,
    Archived,
}

impl LensStatus {
    pub const ALL: [LensStatus; 3] = [LensStatus::Draft, LensStatus::Published, LensStatus::Archived];

    pub const fn as_str(self) -> &'static str {
        match self {
            LensStatus::Draft => "draft",
            LensStatus::Published => "published",
            LensStatus::Archived => "archived",
        }
    }

    pub fn parse(s: &str) -> LfResult<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| {
            LfError::invalid_argument(format!(
                "status must be one of draft, published, archived; got {}",
                LfError::excerpt(s)
            ))
            .with_field("status")
        })
    }
}

/// A lens's title, description and a version's changelog follow the
/// rules a workflow's do: one definition serves both.
pub use lf_core::{Changelog, Description, Title};

/// A template body as written: 50 to 100,000 characters, stored verbatim.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TemplateBody(String);

impl TemplateBody {
    pub const MIN_CHARS: usize = 50;
    pub const MAX_CHARS: usize = 100_000;

    pub fn parse(s: impl Into<String>) -> LfResult<Self> {
        let s: String = s.into();
        let max = Self::MAX_CHARS;
        let total = s.chars().take(max + 1).count();
        if total > max {
            return Err(LfError::invalid_argument(format!(
                "template_body must be at most {max} characters long, got more"
            ))
            .with_field("template_body"));
        }
        no_nul("template_body", &s)?;
        let meaningful = s.trim().chars().count();
        if meaningful < Self::MIN_CHARS {
            return Err(LfError::invalid_argument(format!(
                "template_body must be at least {} characters long (not counting leading and trailing whitespace), got {meaningful}. Write a fuller prompt.",
                Self::MIN_CHARS
            ))
            .with_field("template_body"));
        }
        Ok(Self(s))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
    pub fn into_string(self) -> String {
        self.0
    }
    /// Wraps a body read back from a store, where it was valid when written.
    pub fn from_trusted(s: String) -> Self {
        Self(s)
    }
}

impl fmt::Debug for TemplateBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TemplateBody({} chars)", self.0.chars().count())
    }
}

/// A semantic version `MAJOR.MINOR.PATCH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Semver {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Semver {
    pub const INITIAL: Semver = Semver { major: 1, minor: 0, patch: 0 };

    pub fn parse(s: &str) -> LfResult<Self> {
        let bad = || {
            LfError::invalid_argument(format!(
                "semver must look like 1.2.0 (three non-negative integers), got {}",
                LfError::excerpt(s)
            ))
            .with_field("semver")
        };
        let mut parts = s.split('.');
        let mut next = || -> LfResult<u32> {
            let p = parts.next().ok_or_else(bad)?;
            if p.is_empty()
                || p.len() > 9
                || !p.bytes().all(|b| b.is_ascii_digit())
                || (p.len() > 1 && p.starts_with('0'))
            {
                return Err(bad());
            }
            p.parse().map_err(|_| bad())
        };
        let v = Semver { major: next()?, minor: next()?, patch: next()? };
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(v)
    }

    pub fn bump(self, bump: Bump) -> Semver {
        match bump {
            Bump::Major => Semver { major: self.major + 1, minor: 0, patch: 0 },
            Bump::Minor => Semver { major: self.major, minor: self.minor + 1, patch: 0 },
            Bump::Patch => Semver { major: self.major, minor: self.minor, patch: self.patch + 1 },
        }
    }
}

impl fmt::Display for Semver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// How far a new version moves from the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bump {
    Patch,
    Minor,
    Major,
}

impl Bump {
    pub const fn as_str(self) -> &'static str {
        match self {
            Bump::Patch => "patch",
            Bump::Minor => "minor",
            Bump::Major => "major",
        }
    }
}

/// One parameter of a lens version: inferred from the body's tokens and
/// refined by the author's declarations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub id: ParamId,
    /// The label as first spelled in the body.
    pub label: String,
    pub optional: bool,
    pub type_hint: Option<TypeHint>,
    pub description: Option<String>,
    /// Used when an optional parameter gets no value.
    pub default: Option<String>,
    /// The allowed values of a select or multiselect parameter (empty: any).
    pub options: Vec<String>,
}

impl Param {
    /// The case-insensitive key labels match by.
    pub fn key(&self) -> String {
        crate::template::label_key(&self.label)
    }
}

/// A lens: the current state of a template and its metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lens {
    pub id: LensId,
    pub owner: LenserId,
    /// The AI Lenser that created it for `owner`; None when a person did.
    pub agent: Option<LenserId>,
    pub title: Title,
    pub description: Option<Description>,
    pub visibility: Visibility,
    pub status: LensStatus,
    pub parent_lens_id: Option<LensId>,
    pub head_version_id: VersionId,
    pub head_semver: Semver,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub archived_at: Option<Timestamp>,
}

/// A lens about to be created: everything but its ids and timestamps.
#[derive(Clone, Debug)]
pub struct LensDraft {
    pub owner: LenserId,
    /// The AI Lenser creating it for `owner`, if one is.
    pub agent: Option<LenserId>,
    pub title: Title,
    pub description: Option<Description>,
    pub visibility: Visibility,
    pub parent_lens_id: Option<LensId>,
    pub body: TemplateBody,
    /// The parameters of `body` (see [`crate::build_params`]).
    pub params: Vec<Param>,
    pub changelog: String,
}

impl LensDraft {
    /// A public lens with no description and no parent, whose first version's
    /// changelog is "Initial version.".
    pub fn new(owner: LenserId, title: Title, body: TemplateBody, params: Vec<Param>) -> Self {
        Self {
            owner,
            agent: None,
            title,
            description: None,
            visibility: Visibility::Public,
            parent_lens_id: None,
            body,
            params,
            changelog: "Initial version.".to_owned(),
        }
    }

    /// The published lens and its first version, 1.0.0, with fresh ids, both
    /// created at `now`.
    pub fn build(self, now: Timestamp) -> (Lens, LensVersion) {
        let version = LensVersion {
            id: VersionId::new(),
            lens_id: LensId::new(),
            semver: Semver::INITIAL,
            body: self.body,
            params: self.params,
            changelog: self.changelog,
            agent: self.agent,
            created_at: now,
        };
        let lens = Lens {
            id: version.lens_id,
            owner: self.owner,
            agent: self.agent,
            title: self.title,
            description: self.description,
            visibility: self.visibility,
            status: LensStatus::Published,
            parent_lens_id: self.parent_lens_id,
            head_version_id: version.id,
            head_semver: version.semver,
            created_at: now,
            updated_at: now,
            archived_at: None,
        };
        (lens, version)
    }
}

/// One immutable version of a lens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LensVersion {
    pub id: VersionId,
    pub lens_id: LensId,
    pub semver: Semver,
    pub body: TemplateBody,
    /// In order of first appearance in the body.
    pub params: Vec<Param>,
    pub changelog: String,
    /// The AI Lenser that wrote this version; None when a person did.
    pub agent: Option<LenserId>,
    pub created_at: Timestamp,
}

/// A version without its body, as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionSummary {
    pub id: VersionId,
    pub semver: Semver,
    pub changelog: String,
    /// The AI Lenser that wrote it; None when a person did.
    pub agent: Option<LenserId>,
    pub created_at: Timestamp,
    pub params: Vec<Param>,
}

impl From<&LensVersion> for VersionSummary {
    fn from(v: &LensVersion) -> Self {
        Self {
            id: v.id,
            semver: v.semver,
            changelog: v.changelog.clone(),
            agent: v.agent,
            created_at: v.created_at,
            params: v.params.clone(),
        }
    }
}

/// The words of `search_lenses`: each matches a word of the title,
/// description or head body that starts with it.
pub use lf_core::SearchQuery;

/// Which version of a lens to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VersionSelector {
    Head,
    Id(VersionId),
    Semver(Semver),
    /// The version a label points at (never `latest`: that is `Head`).
    Label(LabelName),
}

impl VersionSelector {
    /// The version a caller's `label` argument (in `field`) names: `latest`
    /// is the head.
    pub fn label(field: &str, s: &str) -> LfResult<Self> {
        let name = LabelName::parse(field, s)?;
        Ok(if name.is_latest() { Self::Head } else { Self::Label(name) })
    }
}

/// Filters of `list_lenses`. `status: Some(Archived)` lists archived lenses
/// whatever `include_archived` says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LensFilter {
    pub visibility: Option<Visibility>,
    pub status: Option<LensStatus>,
    pub owner: Option<LenserId>,
    pub include_archived: bool,
}

/// A partial change to a lens's metadata. `None` leaves a field as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LensPatch {
    pub title: Option<Title>,
    pub description: Option<Option<Description>>,
    pub visibility: Option<Visibility>,
    pub status: Option<LensStatus>,
    pub archived_at: Option<Option<Timestamp>>,
    pub deleted_at: Option<Timestamp>,
    pub updated_at: Option<Timestamp>,
}

/// A run of a lens recorded against a workflow for tracking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LensRun {
    pub id: RunId,
    pub lens_id: LensId,
    pub version_id: VersionId,
    pub workflow_id: WorkflowId,
    pub lenser: Option<LenserId>,
    /// The AI Lenser that ran it for `lenser`; None when a person did.
    pub agent: Option<LenserId>,
    pub params_used: Vec<String>,
    pub created_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_parse_and_bump() {
        let v = Semver::parse("1.2.3").unwrap();
        assert_eq!(v.to_string(), "1.2.3");
        assert_eq!(v.bump(Bump::Major).to_string(), "2.0.0");
        assert_eq!(v.bump(Bump::Minor).to_string(), "1.3.0");
        assert_eq!(v.bump(Bump::Patch).to_string(), "1.2.4");
        for bad in
            ["", "1", "1.2", "1.2.3.4", "01.2.3", "1.2.x", "-1.2.3", "1.2.3-beta", " 1.2.3", "9999999999.0.0"]
        {
            assert!(Semver::parse(bad).is_err(), "{bad}");
        }
        assert!(Semver::parse("1.10.0").unwrap() > Semver::parse("1.9.0").unwrap());
    }

    #[test]
    fn body_length_counts_trimmed_chars() {
        let body = format!("   {}   ", "é".repeat(49));
        assert!(TemplateBody::parse(body).is_err());
        assert!(TemplateBody::parse("é".repeat(50)).is_ok());
        assert!(TemplateBody::parse("x".repeat(100_001)).is_err());
        assert!(TemplateBody::parse(format!("{}\0", "x".repeat(60))).is_err());
        assert!(Title::parse("a\0b").is_err());
        // Stored verbatim, whitespace included.
        assert_eq!(TemplateBody::parse(format!(" {} ", "x".repeat(50))).unwrap().as_str().len(), 52);
    }

    #[test]
    fn titles_trim_and_bound() {
        assert_eq!(Title::parse("  Code Reviewer ").unwrap().as_str(), "Code Reviewer");
        assert!(Title::parse("   ").is_err());
        assert!(Title::parse("x".repeat(201)).is_err());
        assert!(Title::parse("x".repeat(200)).is_ok());
    }

    #[test]
    fn search_query_words() {
        assert_eq!(SearchQuery::parse("  Code   Review ").unwrap().terms(), ["code", "review"]);
        assert_eq!(SearchQuery::parse("C++ code-review code").unwrap().terms(), ["c", "code", "review"]);
        assert!(SearchQuery::parse("   ").is_err());
        assert!(SearchQuery::parse("%%%").is_err());
        assert!(SearchQuery::parse("").is_err());
    }
}
