//! Parameters of a version and how versions differ: building a version's
//! parameter list from its body and the author's declarations, and the semver
//! bump a change calls for.

use std::collections::HashSet;

use lf_core::{LfError, LfResult, ParamId};

use crate::model::{Bump, Param, TemplateBody};
use crate::template::{Template, label_key};

/// Most distinct parameters a version may have.
pub const MAX_PARAMS: usize = 500;
/// Most characters of a parameter's description.
pub const MAX_PARAM_DESCRIPTION: usize = 500;
/// Most characters of a default value or an option.
pub const MAX_PARAM_VALUE: usize = 10_000;
/// Most options of one parameter.
pub const MAX_OPTIONS: usize = 100;

/// An author's statement about a parameter of the body: it may only restate
/// or refine what the body's tokens say. `None` leaves a field as inferred.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParamDeclaration {
    pub label: String,
    pub optional: Option<bool>,
    pub description: Option<String>,
    pub default: Option<String>,
    pub options: Option<Vec<String>>,
}

impl ParamDeclaration {
    pub fn new(label: impl Into<String>) -> Self {
        Self { label: label.into(), ..Self::default() }
    }
    pub fn optional(mut self, optional: bool) -> Self {
        self.optional = Some(optional);
        self
    }
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }
    pub fn default_value(mut self, d: impl Into<String>) -> Self {
        self.default = Some(d.into());
        self
    }
    pub fn options<S: Into<String>>(mut self, o: impl IntoIterator<Item = S>) -> Self {
        self.options = Some(o.into_iter().map(Into::into).collect());
        self
    }
}

fn too_long(s: &str, max: usize) -> bool {
    s.chars().nth(max).is_some()
}

/// The parameters of a version with `body`: inferred from its tokens, with the
/// refinements (description, default, options) of `carry` kept by key, then
/// `declarations` applied.
pub fn build_params(
    body: &TemplateBody,
    declarations: &[ParamDeclaration],
    carry: &[Param],
) -> LfResult<Vec<Param>> {
    let template = Template::parse(body.as_str());
    if template.params().len() > MAX_PARAMS {
        return Err(LfError::invalid_argument(format!(
            "template_body has {} distinct parameters; at most {MAX_PARAMS} are allowed",
            template.params().len()
        ))
        .with_field("template_body"));
    }
    let mut params: Vec<Param> = template
        .params()
        .iter()
        .map(|d| {
            let prev = carry.iter().find(|p| p.key() == d.key);
            Param {
                id: ParamId::new(),
                label: d.label.clone(),
                optional: d.optional,
                type_hint: d.type_hint,
                description: prev.and_then(|p| p.description.clone()),
                // Kept only if the parameter ends up optional (checked below).
                default: prev.and_then(|p| p.default.clone()),
                options: prev.map(|p| p.options.clone()).unwrap_or_default(),
            }
        })
        .collect();

    let mut declared = HashSet::new();
    let mut declared_default = vec![false; params.len()];
    for (i, decl) in declarations.iter().enumerate() {
        let field = format!("params[{i}]");
        let label = decl.label.trim();
        let key = label_key(label);
        if label.is_empty() {
            return Err(
                LfError::invalid_argument(format!("{field}.label must not be empty")).with_field(&field)
            );
        }
        if !declared.insert(key.clone()) {
            return Err(LfError::invalid_argument(format!(
                "{field} declares {} a second time; declare each parameter once",
                LfError::excerpt(label)
            ))
            .with_field(&field));
        }
        let Some(at) = params.iter().position(|p| p.key() == key) else {
            return Err(LfError::invalid_argument(format!(
                "{field}.label {} is not a parameter of template_body. Parameters come from the body's tokens: write [[{}]] (or [[{}!]] if optional) in template_body, or drop this declaration.",
                LfError::excerpt(label),
                label.chars().take(100).collect::<String>(),
                label.chars().take(100).collect::<String>(),
            ))
            .with_field(&field));
        };
        let param = &mut params[at];
        if let Some(optional) = decl.optional {
            param.optional = optional;
        }
        for text in decl.description.iter().chain(&decl.default).chain(decl.options.iter().flatten()) {
            lf_core::no_nul(&field, text)?;
        }
        if let Some(d) = &decl.description {
            if too_long(d, MAX_PARAM_DESCRIPTION) {
                return Err(LfError::invalid_argument(format!(
                    "{field}.description must be at most {MAX_PARAM_DESCRIPTION} characters"
                ))
                .with_field(&field));
            }
            param.description = Some(d.trim().to_owned()).filter(|d| !d.is_empty());
        }
        if let Some(d) = &decl.default {
            if too_long(d, MAX_PARAM_VALUE) {
                return Err(LfError::invalid_argument(format!(
                    "{field}.default must be at most {MAX_PARAM_VALUE} characters"
                ))
                .with_field(&field));
            }
            param.default = Some(d.clone());
            declared_default[at] = true;
        }
        if let Some(options) = &decl.options {
            if options.len() > MAX_OPTIONS {
                return Err(LfError::invalid_argument(format!(
                    "{field}.options may list at most {MAX_OPTIONS} values"
                ))
                .with_field(&field));
            }
            let mut seen = HashSet::new();
            for o in options {
                if o.trim().is_empty() || too_long(o, MAX_PARAM_VALUE) || !seen.insert(o.as_str()) {
                    return Err(LfError::invalid_argument(format!(
                        "{field}.options must be distinct, non-empty values of at most {MAX_PARAM_VALUE} characters; {} is not",
                        LfError::excerpt(o)
                    ))
                    .with_field(&field));
                }
            }
            param.options = options.clone();
        }
    }

    for (param, declared) in params.iter_mut().zip(declared_default) {
        if !param.optional && !declared {
            // A carried default goes with the optional flag it came with.
            param.default = None;
        }
        if let Some(d) = &param.default {
            if !param.optional {
                return Err(LfError::invalid_argument(format!(
                    "parameter {} is required, so it cannot have a default: mark it optional ([[{}!]] or optional: true) or drop the default",
                    LfError::excerpt(&param.label),
                    param.label
                ))
                .with_field("params"));
            }
            check_option(param, d).map_err(|e| e.with_field("params"))?;
        }
    }
    Ok(params)
}

/// `given` plus a restatement of every `optional` flag the previous version
/// declared against its token's marker, for tokens whose marker `new_body`
/// keeps: a declared flag lasts until the author changes the marker or
/// declares the parameter again.
pub fn keep_declared_flags(
    old_body: &str,
    old: &[Param],
    new_body: &str,
    given: &[ParamDeclaration],
) -> Vec<ParamDeclaration> {
    let (old_t, new_t) = (Template::parse(old_body), Template::parse(new_body));
    let marker = |t: &Template<'_>, key: &str| t.params().iter().find(|d| d.key == key).map(|d| d.optional);
    let mut out = given.to_vec();
    for p in old {
        let key = p.key();
        let (was, is) = (marker(&old_t, &key), marker(&new_t, &key));
        let restated = given.iter().any(|d| label_key(d.label.trim()) == key);
        if !restated && is.is_some() && was == is && was != Some(p.optional) {
            out.push(ParamDeclaration::new(p.label.clone()).optional(p.optional));
        }
    }
    out
}

/// Refuses a value outside the options of a parameter that has them. A
/// multiselect value is a comma-separated list of options.
pub fn check_option(param: &Param, value: &str) -> LfResult<()> {
    if param.options.is_empty() {
        return Ok(());
    }
    let multi = param.type_hint == Some(crate::template::TypeHint::Multiselect);
    let ok = if multi {
        value
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .all(|v| param.options.iter().any(|o| o == v))
    } else {
        param.options.iter().any(|o| o == value)
    };
    if ok {
        return Ok(());
    }
    let allowed = param.options.iter().map(|o| LfError::excerpt(o)).collect::<Vec<_>>().join(", ");
    let how = if multi { "a comma-separated list of" } else { "one of" };
    Err(LfError::invalid_argument(format!(
        "value {} of parameter {} is not allowed: it must be {how} {allowed}",
        LfError::excerpt(value),
        LfError::excerpt(&param.label)
    ))
    .with_detail("label", lf_core::Detail::Str(param.label.clone()))
    .with_detail("options", lf_core::Detail::Strs(param.options.clone())))
}

/// One change between two versions' parameter lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamChange {
    Added {
        label: String,
        optional: bool,
    },
    Removed {
        label: String,
    },
    MadeRequired {
        label: String,
    },
    MadeOptional {
        label: String,
    },
    /// Description, default, options or type hint changed.
    Refined {
        label: String,
    },
}

impl ParamChange {
    pub fn bump(&self) -> Bump {
        match self {
            ParamChange::Removed { .. } | ParamChange::MadeRequired { .. } => Bump::Major,
            ParamChange::Added { optional: false, .. } => Bump::Major,
            ParamChange::Added { optional: true, .. } | ParamChange::MadeOptional { .. } => Bump::Minor,
            ParamChange::Refined { .. } => Bump::Patch,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            ParamChange::Added { .. } => "added",
            ParamChange::Removed { .. } => "removed",
            ParamChange::MadeRequired { .. } => "made_required",
            ParamChange::MadeOptional { .. } => "made_optional",
            ParamChange::Refined { .. } => "refined",
        }
    }

    pub fn label(&self) -> &str {
        match self {
            ParamChange::Added { label, .. }
            | ParamChange::Removed { label }
            | ParamChange::MadeRequired { label }
            | ParamChange::MadeOptional { label }
            | ParamChange::Refined { label } => label,
        }
    }

    /// A changelog line, e.g. "Added optional parameter Tone".
    pub fn describe(&self) -> String {
        match self {
            ParamChange::Added { label, optional: true } => format!("Added optional parameter {label}"),
            ParamChange::Added { label, optional: false } => format!("Added required parameter {label}"),
            ParamChange::Removed { label } => format!("Removed parameter {label}"),
            ParamChange::MadeRequired { label } => format!("Made parameter {label} required"),
            ParamChange::MadeOptional { label } => format!("Made parameter {label} optional"),
            ParamChange::Refined { label } => format!("Refined parameter {label}"),
        }
    }
}

/// What changed from one version to the next, and the bump it calls for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub params: Vec<ParamChange>,
    pub body_changed: bool,
}

impl Change {
    pub fn between(old_body: &str, old: &[Param], new_body: &str, new: &[Param]) -> Self {
        let mut params = Vec::new();
        for o in old {
            match new.iter().find(|n| n.key() == o.key()) {
                None => params.push(ParamChange::Removed { label: o.label.clone() }),
                Some(n) if o.optional && !n.optional => {
                    params.push(ParamChange::MadeRequired { label: n.label.clone() })
                }
                Some(n) if !o.optional && n.optional => {
                    params.push(ParamChange::MadeOptional { label: n.label.clone() })
                }
                Some(n)
                    if o.description != n.description
                        || o.default != n.default
                        || o.options != n.options
                        || o.type_hint != n.type_hint =>
                {
                    params.push(ParamChange::Refined { label: n.label.clone() })
                }
                Some(_) => {}
            }
        }
        for n in new {
            if !old.iter().any(|o| o.key() == n.key()) {
                params.push(ParamChange::Added { label: n.label.clone(), optional: n.optional });
            }
        }
        Self { params, body_changed: old_body != new_body }
    }

    /// The bump this change calls for, or `None` when nothing changed.
    pub fn bump(&self) -> Option<Bump> {
        let from_params = self.params.iter().map(ParamChange::bump).max();
        let from_body = self.body_changed.then_some(Bump::Patch);
        from_params.max(from_body)
    }

    /// The generated changelog: one sentence per change.
    pub fn changelog(&self) -> String {
        let mut lines: Vec<String> = self.params.iter().map(ParamChange::describe).collect();
        if self.body_changed && lines.is_empty() {
            lines.push("Changed the template body".to_owned());
        } else if self.body_changed {
            lines.push("changed the template body".to_owned());
        }
        let mut s = lines.join("; ");
        s.push('.');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(s: &str) -> TemplateBody {
        TemplateBody::parse(format!("{s} {}", "padding ".repeat(8))).unwrap()
    }

    fn params(s: &str) -> Vec<Param> {
        build_params(&body(s), &[], &[]).unwrap()
    }

    fn bump(old: &str, new: &str) -> Option<Bump> {
        let (ob, nb) = (body(old), body(new));
        Change::between(ob.as_str(), &params(old), nb.as_str(), &params(new)).bump()
    }

    #[test]
    fn bump_rules() {
        assert_eq!(bump("[[A]] [[B]]", "[[A]]"), Some(Bump::Major), "removed");
        assert_eq!(bump("[[A]]", "[[A]] [[B]]"), Some(Bump::Major), "new required");
        assert_eq!(bump("[[A!]]", "[[A]]"), Some(Bump::Major), "optional to required");
        assert_eq!(bump("[[A]]", "[[A]] [[B!]]"), Some(Bump::Minor), "new optional");
        assert_eq!(bump("[[A]]", "[[A!]]"), Some(Bump::Minor), "required to optional");
        assert_eq!(bump("Say [[A]]", "Tell [[A]]"), Some(Bump::Patch), "body only");
        assert_eq!(bump("[[A]]", "[[a]]"), Some(Bump::Patch), "respelled label is the same parameter");
        assert_eq!(bump("[[A]]", "[[A]]"), None);
        assert_eq!(bump("[[A]] [[B!]]", "[[A]] [[C!]]"), Some(Bump::Major), "remove wins over add");
    }

    #[test]
    fn generated_changelog() {
        let (ob, nb) = (body("[[A]]"), body("[[A]] [[Tone!]]"));
        let c = Change::between(ob.as_str(), &params("[[A]]"), nb.as_str(), &params("[[A]] [[Tone!]]"));
        assert_eq!(c.changelog(), "Added optional parameter Tone; changed the template body.");
    }

    #[test]
    fn declarations_refine_only() {
        let b = body("[[Tone!]] and [[Topic]]");
        let p = build_params(
            &b,
            &[ParamDeclaration::new("tone")
                .description("How it sounds")
                .options(["formal", "casual"])
                .default_value("formal")],
            &[],
        )
        .unwrap();
        assert_eq!(p[0].label, "Tone");
        assert_eq!(p[0].options, ["formal", "casual"]);
        assert_eq!(p[0].default.as_deref(), Some("formal"));

        let err = build_params(&b, &[ParamDeclaration::new("Mood")], &[]).unwrap_err();
        assert_eq!(err.code(), lf_core::ErrorCode::InvalidArgument);
        assert!(err.message().contains("[[Mood]]"));

        let err = build_params(&b, &[ParamDeclaration::new("Topic").default_value("x")], &[]).unwrap_err();
        assert!(err.message().contains("required"));

        let err = build_params(&b, &[ParamDeclaration::new("Tone").options(["a"]).default_value("b")], &[])
            .unwrap_err();
        assert_eq!(err.code(), lf_core::ErrorCode::InvalidArgument);

        let err = build_params(&b, &[ParamDeclaration::new("Tone"), ParamDeclaration::new("TONE")], &[])
            .unwrap_err();
        assert!(err.message().contains("second time"));

        // Declaring a token optional overrides the body's marker.
        let p = build_params(&b, &[ParamDeclaration::new("Topic").optional(true)], &[]).unwrap();
        assert!(p[1].optional);
    }

    #[test]
    fn refinements_carry_over_by_key() {
        let first =
            build_params(&body("[[Tone!]]"), &[ParamDeclaration::new("Tone").description("d")], &[]).unwrap();
        let next = build_params(&body("New [[TONE!]]"), &[], &first).unwrap();
        assert_eq!(next[0].description.as_deref(), Some("d"));
        assert_ne!(next[0].id, first[0].id, "each version has its own parameter rows");
    }
}
