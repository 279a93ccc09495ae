//! What answers an experiment's cases: a contender, as `run_experiment`
//! names it ([`ContenderForm`]), checked and pinned at start
//! ([`Contender`]).
//!
//! The forms (a string each):
//! - `<profile>` or `model:<profile>`: a model profile's name or id (or an
//!   operator endpoint's name), asked the case;
//! - `lenser:<AI Lenser id or handle>`: an AI Lenser the caller can see,
//!   its persona as the system message and its model;
//! - `lens:<lens id>@<version>:<profile>`: a lens version (a semver, a
//!   version id, or a label, pinned at start to the version it points at)
//!   rendered with the case's inputs and sent to the profile (which may
//!   hold `:` or `/`: everything after the first `:` following the `@`);
//! - `workflow:<workflow id>`: the workflow's head version (pinned at
//!   start) run with the case's inputs; its output is the answer.
//!
//! Only these four prefixes are read: a profile whose name begins with one
//! is named `model:<name>`. Each contender is shown, and matched across
//! experiments, by its key: the string as given (a bare profile's name).

use async_trait::async_trait;
use lf_core::{LensId, LenserId, LfResult, Principal, VersionId, WorkflowId};
use serde_json::{Value, json};

/// A contender as saved: checked when the experiment started, a lens label
/// and a workflow's head pinned to their versions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Contender {
    /// A model profile's name or id, or an operator endpoint's name.
    Model { model: String },
    /// An AI Lenser.
    Lenser { given: String, lenser: LenserId },
    /// A lens version sent to a model profile.
    Lens { given: String, lens: LensId, version: VersionId, model: String },
    /// A workflow's version.
    Workflow { given: String, workflow: WorkflowId, version: u32 },
}

impl Contender {
    /// A model profile's contender.
    pub fn model(model: &str) -> Self {
        Self::Model { model: model.to_owned() }
    }

    /// How it is shown and matched across experiments: the string as given.
    pub fn key(&self) -> &str {
        match self {
            Self::Model { model } => model,
            Self::Lenser { given, .. } | Self::Lens { given, .. } | Self::Workflow { given, .. } => given,
        }
    }

    /// As the stores keep it: a model profile as its name (as every
    /// experiment saved before the other kinds), any other as an object.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Model { model } => Value::String(model.clone()),
            Self::Lenser { given, lenser } => {
                json!({"kind": "lenser", "given": given, "lenser": lenser.to_string()})
            }
            Self::Lens { given, lens, version, model } => json!({"kind": "lens", "given": given,
                "lens": lens.to_string(), "version": version.to_string(), "model": model}),
            Self::Workflow { given, workflow, version } => {
                json!({"kind": "workflow", "given": given, "workflow": workflow.to_string(), "version": version})
            }
        }
    }

    /// What [`Contender::to_json`] wrote (and `{"model": …}`).
    pub fn from_json(v: &Value) -> Result<Self, &'static str> {
        if let Value::String(model) = v {
            return Ok(Self::Model { model: model.clone() });
        }
        let text = |k: &str| v.get(k).and_then(Value::as_str).ok_or("a contender without its fields");
        let bad_id = |_| "a contender with a malformed id";
        match v.get("kind").and_then(Value::as_str) {
            None => Ok(Self::Model { model: text("model")?.to_owned() }),
            Some("lenser") => Ok(Self::Lenser {
                given: text("given")?.to_owned(),
                lenser: LenserId::parse("lenser", text("lenser")?).map_err(bad_id)?,
            }),
            Some("lens") => Ok(Self::Lens {
                given: text("given")?.to_owned(),
                lens: LensId::parse("lens", text("lens")?).map_err(bad_id)?,
                version: VersionId::parse("version", text("version")?).map_err(bad_id)?,
                model: text("model")?.to_owned(),
            }),
            Some("workflow") => Ok(Self::Workflow {
                given: text("given")?.to_owned(),
                workflow: WorkflowId::parse("workflow", text("workflow")?).map_err(bad_id)?,
                version: v
                    .get("version")
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or("a workflow contender without its version")?,
            }),
            Some(_) => Err("a contender of an unknown kind"),
        }
    }
}

/// A contender as given, before it is checked ([`ContenderForm::parse`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContenderForm<'a> {
    Model(&'a str),
    /// An AI Lenser's id or handle.
    Lenser(&'a str),
    /// `which`: a semver, a version id or a label.
    Lens {
        lens: LensId,
        which: &'a str,
        model: &'a str,
    },
    Workflow(WorkflowId),
}

/// The forms, as errors repeat them.
pub const FORMS: &str = "a model profile, lenser:<AI Lenser id or handle>, \
     lens:<lens id>@<version or label>:<profile> or workflow:<workflow id>";

impl<'a> ContenderForm<'a> {
    /// Reads `given` (trimmed), saying what is wrong with a malformed one.
    pub fn parse(given: &'a str) -> Result<Self, String> {
        let bad = |why: &str| Err(format!("{why}; a contender is {FORMS}."));
        let Some((prefix, rest)) = given.split_once(':') else { return Ok(Self::Model(given)) };
        match prefix {
            "model" if rest.trim().is_empty() => bad("model: names no profile"),
            "model" => Ok(Self::Model(rest.trim())),
            "lenser" if rest.trim().is_empty() => bad("lenser: names no AI Lenser"),
            "lenser" => Ok(Self::Lenser(rest.trim())),
            "workflow" => match WorkflowId::parse("contenders", rest.trim()) {
                Ok(id) => Ok(Self::Workflow(id)),
                Err(_) => bad("workflow: takes a workflow's id"),
            },
            "lens" => {
                let Some((lens, rest)) = rest.split_once('@') else {
                    return bad("lens: needs @<version or label>");
                };
                let Ok(lens) = LensId::parse("contenders", lens.trim()) else {
                    return bad("lens: takes a lens's id before @");
                };
                match rest.split_once(':') {
                    Some((which, model)) if !which.trim().is_empty() && !model.trim().is_empty() => {
                        Ok(Self::Lens { lens, which: which.trim(), model: model.trim() })
                    }
                    _ => bad("lens: needs a version or label, then :<profile>"),
                }
            }
            _ => Ok(Self::Model(given)),
        }
    }
}

/// Checks and pins the contenders other than model profiles for the
/// caller starting an experiment (the runner's, given by the composition
/// root): NOT_FOUND for one the caller cannot use, INVALID_ARGUMENT for a
/// kind this server does not run.
#[async_trait]
pub trait ContenderCheck: Send + Sync {
    /// `form` (given as `given`) as the caller `p` may use it, pinned.
    async fn check(&self, p: &Principal, given: &str, form: ContenderForm<'_>) -> LfResult<Contender>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_read_and_bad_ones_say_why() {
        let id = "0190f5c4-6d2a-7b3c-8d4e-5f6a7b8c9d0e";
        assert_eq!(ContenderForm::parse("fast"), Ok(ContenderForm::Model("fast")));
        assert_eq!(ContenderForm::parse("org/m:7b"), Ok(ContenderForm::Model("org/m:7b")));
        assert_eq!(ContenderForm::parse("model:lenser:x"), Ok(ContenderForm::Model("lenser:x")));
        assert_eq!(ContenderForm::parse("lenser:ada"), Ok(ContenderForm::Lenser("ada")));
        let given = format!("lens:{id}@production:org/m:7b");
        let lens = ContenderForm::parse(&given).unwrap();
        let ContenderForm::Lens { which, model, .. } = lens else { panic!("{lens:?}") };
        assert_eq!((which, model), ("production", "org/m:7b"));
        assert!(matches!(ContenderForm::parse(&format!("workflow:{id}")), Ok(ContenderForm::Workflow(_))));
        let (no_at, no_model) = (format!("lens:{id}:fast"), format!("lens:{id}@production"));
        for bad in ["lenser:", "workflow:nope", "lens:nope@1.0.0:fast", &no_at, &no_model, "model: "] {
            let why = ContenderForm::parse(bad).unwrap_err();
            assert!(why.contains("a contender is"), "{bad}: {why}");
        }
    }

    #[test]
    fn the_stored_json_reads_back_and_old_rows_read() {
        let id = LenserId::new().as_uuid();
        let all = [
            Contender::model("fast"),
            Contender::Lenser { given: "lenser:ada".into(), lenser: LenserId::from_uuid(id) },
            Contender::Lens {
                given: "lens:x@prod:fast".into(),
                lens: LensId::from_uuid(id),
                version: VersionId::from_uuid(id),
                model: "fast".into(),
            },
            Contender::Workflow {
                given: "workflow:x".into(),
                workflow: WorkflowId::from_uuid(id),
                version: 3,
            },
        ];
        for c in all {
            assert_eq!(Contender::from_json(&c.to_json()), Ok(c.clone()));
        }
        assert_eq!(Contender::from_json(&json!("fast")), Ok(Contender::model("fast")));
        assert_eq!(Contender::from_json(&json!({"model": "fast"})), Ok(Contender::model("fast")));
        assert!(Contender::from_json(&json!({"kind": "lens", "given": "x"})).is_err());
    }
}
