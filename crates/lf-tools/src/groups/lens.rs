//! The Lens tools.

use std::collections::BTreeMap;

use lf_core::{LensId, LfError, LfResult, PageRequest, VersionId, WorkflowId};
use lf_lens::{
    Changelog, Description, FindAndRun, ForkLens, LensFilter, LensStatus, LensUpdate, NewLens,
    ParamDeclaration, ParamValues, SearchQuery, Semver, TemplateBody, Title, VersionSelector, Visibility,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::catalog::{Ctx, Group, Meta, Safety, ToolSpec, declare};
use crate::convert::{
    LensOut, LensWithVersionOut, PageOut, ParamOut, VersionOut, VersionSummaryOut, params_out,
};

// ---------------------------------------------------------------- inputs

/// A visibility tier: public (everyone), community (signed-in lensers) or private (the owner).
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VisibilityIn {
    Public,
    Community,
    Private,
}

impl From<VisibilityIn> for Visibility {
    fn from(v: VisibilityIn) -> Self {
        match v {
            VisibilityIn::Public => Visibility::Public,
            VisibilityIn::Community => Visibility::Community,
            VisibilityIn::Private => Visibility::Private,
        }
    }
}

/// A publication status.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusIn {
    Draft,
    Published,
    Archived,
}

impl From<StatusIn> for LensStatus {
    fn from(s: StatusIn) -> Self {
        match s {
            StatusIn::Draft => LensStatus::Draft,
            StatusIn::Published => LensStatus::Published,
            StatusIn::Archived => LensStatus::Archived,
        }
    }
}

/// An author's declaration of a parameter that appears in the template.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParamIn {
    /// The label of a [[Label]] token in the template (matched case-insensitively).
    #[schemars(length(min = 1, max = 100))]
    pub label: String,
    /// Whether the parameter may be left out. Overrides the token's `!` marker when given.
    pub optional: Option<bool>,
    /// What the value should be, shown to whoever fills it in.
    #[schemars(length(max = 500))]
    pub description: Option<String>,
    /// The value used when an optional parameter gets none.
    #[schemars(length(max = 10000))]
    pub default: Option<String>,
    /// The only values allowed (for select and multiselect parameters), each 1 to 10,000 characters.
    #[schemars(length(max = 100), inner(length(min = 1, max = 10000)))]
    pub options: Option<Vec<String>>,
}

impl From<ParamIn> for ParamDeclaration {
    fn from(p: ParamIn) -> Self {
        ParamDeclaration {
            label: p.label,
            optional: p.optional,
            description: p.description,
            default: p.default,
            options: p.options,
        }
    }
}

fn lens_id(s: &str) -> LfResult<LensId> {
    LensId::parse("lens_id", s)
}

fn version_selector(version_id: Option<&str>) -> LfResult<VersionSelector> {
    Ok(match version_id {
        Some(v) => VersionSelector::Id(VersionId::parse("version_id", v)?),
        None => VersionSelector::Head,
    })
}

fn values(field: &str, map: Option<BTreeMap<String, String>>) -> LfResult<ParamValues> {
    ParamValues::parse(field, map.unwrap_or_default())
}

fn page(limit: Option<i64>, offset: Option<i64>) -> LfResult<PageRequest> {
    PageRequest::new(limit, offset)
}

fn optional_description(d: Option<String>) -> LfResult<Option<Description>> {
    d.map(Description::parse).transpose()
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListLensesIn {
    /// Results per page, 1 to 100.
    #[schemars(range(min = 1, max = 100), extend("default" = 20))]
    pub limit: Option<i64>,
    /// How many results to skip.
    #[schemars(range(min = 0, max = 1000000), extend("default" = 0))]
    pub offset: Option<i64>,
    /// Only lenses of this visibility tier.
    pub visibility: Option<VisibilityIn>,
    /// Only lenses of this status.
    pub status: Option<StatusIn>,
    /// Only lenses owned by this lenser (UUID).
    #[schemars(extend("format" = "uuid"))]
    pub lenser_id: Option<String>,
    /// Include archived lenses.
    #[schemars(extend("default" = false))]
    pub include_archived: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchLensesIn {
    /// Search words (at most 16); every word must match the start of a word in the title, description or template.
    #[schemars(length(min = 1, max = 500))]
    pub query: String,
    /// Only lenses of this visibility tier.
    pub visibility: Option<VisibilityIn>,
    /// Results per page, 1 to 100.
    #[schemars(range(min = 1, max = 100), extend("default" = 20))]
    pub limit: Option<i64>,
    /// How many results to skip.
    #[schemars(range(min = 0, max = 1000000), extend("default" = 0))]
    pub offset: Option<i64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LensIdIn {
    /// The lens (UUID).
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetLensVersionIn {
    /// The lens (UUID).
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// The version (UUID). Give this or semver.
    #[schemars(extend("format" = "uuid"))]
    pub version_id: Option<String>,
    /// The version's semver, e.g. "1.2.0". Give this or version_id.
    pub semver: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractLensParamsIn {
    /// The lens (UUID).
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// A specific version (UUID); the head version when left out.
    #[schemars(extend("format" = "uuid"))]
    pub version_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateLensParamsIn {
    /// The lens (UUID).
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// A specific version (UUID); the head version when left out.
    #[schemars(extend("format" = "uuid"))]
    pub version_id: Option<String>,
    /// Parameter values by label (labels match case-insensitively).
    pub values: BTreeMap<String, String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateLensIn {
    /// Display name, 1 to 200 characters.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    /// The prompt template, at least 50 characters. [[Name]] is a required parameter, [[Name!]] an optional one, [[Name:type]] a typed one; \[[ is a literal [[.
    #[schemars(length(min = 50, max = 100000))]
    pub template_body: String,
    /// What the lens is for, up to 2,000 characters.
    #[schemars(length(max = 2000))]
    pub description: Option<String>,
    /// Who may see it: public, community or private.
    #[schemars(extend("default" = "public"))]
    pub visibility: Option<VisibilityIn>,
    /// Refinements of parameters inferred from the template (description, default, options, optional).
    #[schemars(length(max = 500))]
    pub params: Option<Vec<ParamIn>>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateLensIn {
    /// The lens to update (UUID).
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// A new template (omit to keep the current one). At least 50 characters.
    #[schemars(length(min = 50, max = 100000))]
    pub template_body: Option<String>,
    /// A new visibility tier.
    pub visibility: Option<VisibilityIn>,
    /// Parameter refinements for the new version; refinements of unchanged parameters carry over.
    #[schemars(length(max = 500))]
    pub params: Option<Vec<ParamIn>>,
    /// A new title, 1 to 200 characters.
    #[schemars(length(min = 1, max = 200))]
    pub title: Option<String>,
    /// A new description, up to 2,000 characters.
    #[schemars(length(max = 2000))]
    pub description: Option<String>,
    /// What changed, stored with the new version (generated when left out).
    #[schemars(length(min = 1, max = 2000))]
    pub changelog: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkLensIn {
    /// The lens to fork (UUID): any lens you can read.
    #[schemars(extend("format" = "uuid"))]
    pub source_lens_id: String,
    /// Title of the fork, 1 to 200 characters (default "Fork of <source title>").
    #[schemars(length(min = 1, max = 200))]
    pub title: Option<String>,
    /// A template to use instead of the source's, at least 50 characters.
    #[schemars(length(min = 50, max = 100000))]
    pub template_body: Option<String>,
    /// Who may see the fork: public, community or private.
    #[schemars(extend("default" = "public"))]
    pub visibility: Option<VisibilityIn>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetVisibilityIn {
    /// The lens (UUID).
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// The new visibility tier.
    pub visibility: VisibilityIn,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunLensIn {
    /// The lens to run (UUID).
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// Pin a version (UUID); the head version when left out.
    #[schemars(extend("format" = "uuid"))]
    pub version_id: Option<String>,
    /// Parameter values by label (labels match case-insensitively; unknown labels are ignored).
    pub param_values: Option<BTreeMap<String, String>>,
    /// Record this run against a workflow (UUID) for tracking.
    #[schemars(extend("format" = "uuid"))]
    pub workflow_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindAndRunIn {
    /// Search words describing the lens wanted (at most 16).
    #[schemars(length(min = 1, max = 500))]
    pub query: String,
    /// Parameter values by label, used if a lens is found.
    pub param_values: Option<BTreeMap<String, String>>,
    /// Only consider lenses of this visibility tier.
    pub visibility: Option<VisibilityIn>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteLensIn {
    /// The lens to delete (UUID).
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// Must be exactly true, after the user agreed to the deletion.
    #[schemars(required, extend("const" = true))]
    pub confirm: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffVersionsIn {
    /// The lens (UUID).
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// The older version: a semver like "1.0.0" or a version UUID.
    pub from: String,
    /// The newer version: a semver or a version UUID (default: the head).
    pub to: Option<String>,
}

// ---------------------------------------------------------------- outputs

#[derive(Serialize, JsonSchema)]
pub struct VersionListOut {
    pub lens_id: String,
    /// Newest first.
    pub versions: Vec<VersionSummaryOut>,
    pub count: usize,
}

#[derive(Serialize, JsonSchema)]
pub struct ExtractOut {
    pub lens_id: String,
    pub version_id: String,
    pub semver: String,
    /// In order of first appearance.
    pub params: Vec<ParamOut>,
    /// Each distinct token as first written, brackets included.
    pub raw_tokens_in_template: Vec<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct InvalidValueOut {
    pub label: String,
    pub reason: String,
}

#[derive(Serialize, JsonSchema)]
pub struct ValidateOut {
    /// True when nothing is missing, unknown or invalid.
    pub valid: bool,
    /// Required labels with no value, in template order.
    pub missing: Vec<String>,
    /// Given labels that match no parameter.
    pub unknown: Vec<String>,
    /// Values outside a parameter's allowed options.
    pub invalid: Vec<InvalidValueOut>,
    pub total_params: usize,
    /// How many values were given.
    pub provided: usize,
}

#[derive(Serialize, JsonSchema)]
pub struct UpdateOut {
    /// The head version after the update.
    #[serde(flatten)]
    pub version: VersionOut,
    /// False when template and parameters were unchanged (only metadata changed).
    pub version_created: bool,
    pub previous_semver: String,
    /// major, minor or patch; null when no version was made.
    pub bump: Option<&'static str>,
    pub head_version_id: String,
    pub lens: LensOut,
}

#[derive(Serialize, JsonSchema)]
pub struct ForkOut {
    #[serde(flatten)]
    pub lens: LensWithVersionOut,
    /// The source lens.
    pub forked_from: String,
}

#[derive(Serialize, JsonSchema)]
pub struct VisibilityOut {
    pub lens_id: String,
    pub visibility: &'static str,
}

#[derive(Serialize, JsonSchema)]
pub struct RunOut {
    /// The prompt to execute, with every parameter filled in.
    pub resolved_prompt: String,
    pub lens_title: String,
    pub lens_description: Option<String>,
    pub lens_id: String,
    pub version_id: String,
    pub semver: String,
    /// The recorded run when workflow_id was given, else null.
    pub run_id: Option<String>,
    /// The labels that got a value.
    pub params_used: Vec<String>,
    /// ceil(characters / 4): an estimate, not a tokenizer count.
    pub estimated_input_tokens: u64,
    /// Whether a run was recorded.
    pub persisted: bool,
    pub next_step: &'static str,
}

#[derive(Serialize, JsonSchema)]
pub struct CandidateOut {
    pub id: String,
    pub title: String,
}

#[derive(Serialize, JsonSchema)]
pub struct FindAndRunOut {
    /// ready, needs_params or no_match.
    pub status: &'static str,
    /// The query, when nothing matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lens_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lens_title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    /// The prompt to execute (ready).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params_used: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_input_tokens: Option<u64>,
    /// Required labels to ask the user for (needs_params).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<String>>,
    /// Every parameter of the lens (needs_params).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_parameters: Option<Vec<ParamOut>>,
    /// Other lenses that matched, best first.
    pub other_candidates: Vec<CandidateOut>,
    /// What to do next.
    pub next_step: String,
}

#[derive(Serialize, JsonSchema)]
pub struct StatusOut {
    pub lens_id: String,
    pub status: &'static str,
    pub archived_at: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct DeleteOut {
    pub deleted: bool,
    pub lens_id: String,
    pub deleted_at: String,
}

#[derive(Serialize, JsonSchema)]
pub struct VersionRefOut {
    pub id: String,
    pub semver: String,
}

#[derive(Serialize, JsonSchema)]
pub struct ChangeOut {
    /// added, removed, made_required, made_optional or refined.
    pub kind: &'static str,
    pub label: String,
    pub description: String,
}

#[derive(Serialize, JsonSchema)]
pub struct DiffOut {
    pub lens_id: String,
    pub from: VersionRefOut,
    pub to: VersionRefOut,
    /// The semver bump the change calls for: major, minor, patch, or null when identical.
    pub bump: Option<&'static str>,
    pub changes: Vec<ChangeOut>,
    pub body_changed: bool,
    /// A unified diff of the templates, empty when equal.
    pub body_diff: String,
}

// ---------------------------------------------------------------- handlers

const RUN_NEXT_STEP: &str = "Execute the resolved_prompt above and return the output to the user.";

fn selector_from_text(field: &str, s: &str) -> LfResult<VersionSelector> {
    if s.contains('-') {
        return VersionId::parse(field, s).map(VersionSelector::Id);
    }
    Semver::parse(s).map(VersionSelector::Semver).map_err(|_| {
        LfError::invalid_argument(format!(
            "{field} must be a semver like 1.2.0 or a version UUID, got {}",
            LfError::excerpt(s)
        ))
        .with_field(field)
    })
}

/// Names `field` on an INVALID_ARGUMENT that names none (a value outside a
/// parameter's options is about one entry of that argument).
fn in_field(field: &'static str) -> impl Fn(LfError) -> LfError {
    move |e| {
        if e.code() == lf_core::ErrorCode::InvalidArgument && !e.details().iter().any(|(k, _)| k == "field") {
            e.with_field(field)
        } else {
            e
        }
    }
}

async fn list_lenses(ctx: Ctx, i: ListLensesIn) -> LfResult<PageOut<LensOut>> {
    let filter = LensFilter {
        visibility: i.visibility.map(Into::into),
        status: i.status.map(Into::into),
        owner: i.lenser_id.as_deref().map(|s| lf_core::LenserId::parse("lenser_id", s)).transpose()?,
        include_archived: i.include_archived.unwrap_or(false),
    };
    let page = ctx.services.lens.list(&ctx.principal, &filter, page(i.limit, i.offset)?).await?;
    Ok(PageOut::from_page(page, |l| LensOut::from(&l)))
}

async fn search_lenses(ctx: Ctx, i: SearchLensesIn) -> LfResult<PageOut<LensOut>> {
    let query = SearchQuery::parse(&i.query)?;
    let page = page(i.limit, i.offset)?;
    let found = ctx.services.lens.search(&ctx.principal, &query, i.visibility.map(Into::into), page).await?;
    Ok(PageOut::from_page(found, |l| LensOut::from(&l)))
}

async fn get_lens(ctx: Ctx, i: LensIdIn) -> LfResult<LensWithVersionOut> {
    let view = ctx.services.lens.get(&ctx.principal, lens_id(&i.lens_id)?).await?;
    Ok(LensWithVersionOut { lens: LensOut::from(&view.lens), head_version: VersionOut::from(&view.version) })
}

async fn list_lens_versions(ctx: Ctx, i: LensIdIn) -> LfResult<VersionListOut> {
    let id = lens_id(&i.lens_id)?;
    let versions = ctx.services.lens.versions(&ctx.principal, id).await?;
    Ok(VersionListOut {
        lens_id: id.to_string(),
        count: versions.len(),
        versions: versions.iter().map(VersionSummaryOut::from).collect(),
    })
}

async fn get_lens_version(ctx: Ctx, i: GetLensVersionIn) -> LfResult<VersionOut> {
    let id = lens_id(&i.lens_id)?;
    let which = match (i.version_id.as_deref(), i.semver.as_deref()) {
        (Some(v), _) => VersionSelector::Id(VersionId::parse("version_id", v)?),
        (None, Some(s)) => VersionSelector::Semver(Semver::parse(s)?),
        (None, None) => {
            return Err(LfError::bad_input(
                "Provide version_id or semver to choose a version; list_lens_versions shows them.",
            ));
        }
    };
    let view = ctx.services.lens.view(&ctx.principal, id, which).await?;
    if let (Some(_), Some(s)) = (i.version_id.as_deref(), i.semver.as_deref())
        && view.version.semver.to_string() != s
    {
        return Err(LfError::bad_input(format!(
            "version_id names version {} but semver says {}; give one of them",
            view.version.semver,
            LfError::excerpt(s)
        )));
    }
    Ok(VersionOut::from(&view.version))
}

async fn extract_lens_params(ctx: Ctx, i: ExtractLensParamsIn) -> LfResult<ExtractOut> {
    let which = version_selector(i.version_id.as_deref())?;
    let e = ctx.services.lens.extract_params(&ctx.principal, lens_id(&i.lens_id)?, which).await?;
    Ok(ExtractOut {
        lens_id: e.lens.id.to_string(),
        version_id: e.version.id.to_string(),
        semver: e.version.semver.to_string(),
        params: params_out(&e.version.params),
        raw_tokens_in_template: e.raw_tokens,
    })
}

async fn validate_lens_params(ctx: Ctx, i: ValidateLensParamsIn) -> LfResult<ValidateOut> {
    let which = version_selector(i.version_id.as_deref())?;
    let values = values("values", Some(i.values))?;
    let v = ctx.services.lens.validate_params(&ctx.principal, lens_id(&i.lens_id)?, which, &values).await?;
    Ok(ValidateOut {
        valid: v.valid,
        missing: v.missing,
        unknown: v.unknown,
        invalid: v.invalid.into_iter().map(|(label, reason)| InvalidValueOut { label, reason }).collect(),
        total_params: v.total_params,
        provided: v.provided,
    })
}

async fn create_lens(ctx: Ctx, i: CreateLensIn) -> LfResult<LensWithVersionOut> {
    let new = NewLens {
        title: Title::parse(i.title)?,
        description: optional_description(i.description)?,
        body: TemplateBody::parse(i.template_body)?,
        visibility: i.visibility.map_or(Visibility::Public, Into::into),
        params: i.params.unwrap_or_default().into_iter().map(Into::into).collect(),
    };
    let view = ctx.services.lens.create(&ctx.principal, new).await?;
    Ok(LensWithVersionOut { lens: LensOut::from(&view.lens), head_version: VersionOut::from(&view.version) })
}

async fn update_lens(ctx: Ctx, i: UpdateLensIn) -> LfResult<UpdateOut> {
    let mut update = LensUpdate::new(lens_id(&i.lens_id)?);
    update.body = i.template_body.map(TemplateBody::parse).transpose()?;
    update.params = i.params.map(|p| p.into_iter().map(Into::into).collect());
    update.title = i.title.map(Title::parse).transpose()?;
    update.description = optional_description(i.description)?;
    update.visibility = i.visibility.map(Into::into);
    update.changelog = i.changelog.map(Changelog::parse).transpose()?;
    let o = ctx.services.lens.update(&ctx.principal, update).await?;
    Ok(UpdateOut {
        version: VersionOut::from(&o.version),
        version_created: o.bump.is_some(),
        previous_semver: o.previous_semver.to_string(),
        bump: o.bump.map(|b| b.as_str()),
        head_version_id: o.lens.head_version_id.to_string(),
        lens: LensOut::from(&o.lens),
    })
}

async fn fork_lens(ctx: Ctx, i: ForkLensIn) -> LfResult<ForkOut> {
    let fork = ForkLens {
        source: LensId::parse("source_lens_id", &i.source_lens_id)?,
        title: i.title.map(Title::parse).transpose()?,
        body: i.template_body.map(TemplateBody::parse).transpose()?,
        visibility: i.visibility.map_or(Visibility::Public, Into::into),
    };
    let source = fork.source;
    let view = ctx.services.lens.fork(&ctx.principal, fork).await?;
    Ok(ForkOut {
        lens: LensWithVersionOut {
            lens: LensOut::from(&view.lens),
            head_version: VersionOut::from(&view.version),
        },
        forked_from: source.to_string(),
    })
}

async fn set_lens_visibility(ctx: Ctx, i: SetVisibilityIn) -> LfResult<VisibilityOut> {
    let lens =
        ctx.services.lens.set_visibility(&ctx.principal, lens_id(&i.lens_id)?, i.visibility.into()).await?;
    Ok(VisibilityOut { lens_id: lens.id.to_string(), visibility: lens.visibility.as_str() })
}

async fn run_lens(ctx: Ctx, i: RunLensIn) -> LfResult<RunOut> {
    let which = version_selector(i.version_id.as_deref())?;
    let values = values("param_values", i.param_values)?;
    let workflow = i.workflow_id.as_deref().map(|w| WorkflowId::parse("workflow_id", w)).transpose()?;
    let r = ctx
        .services
        .lens
        .run(&ctx.principal, lens_id(&i.lens_id)?, which, &values, workflow)
        .await
        .map_err(in_field("param_values"))?;
    Ok(RunOut {
        resolved_prompt: r.prompt,
        lens_title: r.lens.title.to_string(),
        lens_description: r.lens.description.as_ref().map(|d| d.to_string()),
        lens_id: r.lens.id.to_string(),
        version_id: r.version.id.to_string(),
        semver: r.version.semver.to_string(),
        persisted: r.run_id.is_some(),
        run_id: r.run_id.map(|id| id.to_string()),
        params_used: r.params_used,
        estimated_input_tokens: r.estimated_input_tokens,
        next_step: RUN_NEXT_STEP,
    })
}

async fn find_and_run_lens(ctx: Ctx, i: FindAndRunIn) -> LfResult<FindAndRunOut> {
    let query = SearchQuery::parse(&i.query)?;
    let values = values("param_values", i.param_values)?;
    let found = ctx
        .services
        .lens
        .find_and_run(&ctx.principal, &query, &i.query, &values, i.visibility.map(Into::into))
        .await
        .map_err(in_field("param_values"))?;
    let candidates = |c: Vec<lf_lens::Candidate>| {
        c.into_iter().map(|c| CandidateOut { id: c.id.to_string(), title: c.title }).collect()
    };
    let empty = FindAndRunOut {
        status: "no_match",
        query: None,
        lens_id: None,
        lens_title: None,
        version_id: None,
        resolved_prompt: None,
        params_used: None,
        estimated_input_tokens: None,
        missing: None,
        all_parameters: None,
        other_candidates: Vec::new(),
        next_step: String::new(),
    };
    Ok(match found {
        FindAndRun::Ready { resolved, other_candidates } => FindAndRunOut {
            status: "ready",
            lens_id: Some(resolved.lens.id.to_string()),
            lens_title: Some(resolved.lens.title.to_string()),
            version_id: Some(resolved.version.id.to_string()),
            resolved_prompt: Some(resolved.prompt),
            params_used: Some(resolved.params_used),
            estimated_input_tokens: Some(resolved.estimated_input_tokens),
            other_candidates: candidates(other_candidates),
            next_step: RUN_NEXT_STEP.to_owned(),
            ..empty
        },
        FindAndRun::NeedsParams { view, missing, other_candidates } => FindAndRunOut {
            status: "needs_params",
            lens_id: Some(view.lens.id.to_string()),
            lens_title: Some(view.lens.title.to_string()),
            version_id: Some(view.version.id.to_string()),
            next_step: format!(
                "Ask the user for: {}. Then call run_lens with lens_id {} and param_values including these labels.",
                missing.join(", "),
                view.lens.id
            ),
            missing: Some(missing),
            all_parameters: Some(params_out(&view.version.params)),
            other_candidates: candidates(other_candidates),
            ..empty
        },
        FindAndRun::NoMatch { query } => FindAndRunOut {
            next_step: "No lens matched. Try other or fewer words, or list_lenses to browse.".to_owned(),
            query: Some(query),
            ..empty
        },
    })
}

async fn archive_lens(ctx: Ctx, i: LensIdIn) -> LfResult<StatusOut> {
    let lens = ctx.services.lens.archive(&ctx.principal, lens_id(&i.lens_id)?).await?;
    Ok(StatusOut {
        lens_id: lens.id.to_string(),
        status: lens.status.as_str(),
        archived_at: lens.archived_at.map(|t| t.to_rfc3339()),
    })
}

async fn restore_lens(ctx: Ctx, i: LensIdIn) -> LfResult<StatusOut> {
    let lens = ctx.services.lens.restore(&ctx.principal, lens_id(&i.lens_id)?).await?;
    Ok(StatusOut { lens_id: lens.id.to_string(), status: lens.status.as_str(), archived_at: None })
}

async fn delete_lens(ctx: Ctx, i: DeleteLensIn) -> LfResult<DeleteOut> {
    let id = lens_id(&i.lens_id)?;
    let (lens, at) = ctx.services.lens.delete(&ctx.principal, id, i.confirm == Some(true)).await?;
    Ok(DeleteOut { deleted: true, lens_id: lens.id.to_string(), deleted_at: at.to_rfc3339() })
}

async fn diff_lens_versions(ctx: Ctx, i: DiffVersionsIn) -> LfResult<DiffOut> {
    let id = lens_id(&i.lens_id)?;
    let from = selector_from_text("from", &i.from)?;
    let to =
        i.to.as_deref().map(|t| selector_from_text("to", t)).transpose()?.unwrap_or(VersionSelector::Head);
    let d = ctx.services.lens.diff(&ctx.principal, id, from, to).await?;
    Ok(DiffOut {
        lens_id: id.to_string(),
        from: VersionRefOut { id: d.from.id.to_string(), semver: d.from.semver.to_string() },
        to: VersionRefOut { id: d.to.id.to_string(), semver: d.to.semver.to_string() },
        bump: d.bump.map(|b| b.as_str()),
        changes: d
            .changes
            .iter()
            .map(|c| ChangeOut { kind: c.kind(), label: c.label().to_owned(), description: c.describe() })
            .collect(),
        body_changed: d.body_changed,
        body_diff: d.body_diff,
    })
}

// ---------------------------------------------------------------- declarations

const fn meta(name: &'static str, safety: Safety, title: &'static str, description: &'static str) -> Meta {
    Meta { name, group: Group::Lens, safety, open_world: false, title, description }
}

/// The Lens tools, in catalog order.
pub fn tools() -> Vec<ToolSpec> {
    use Safety::*;
    vec![
        declare(
            meta(
                "list_lenses",
                Read,
                "List lenses",
                "List lenses you can see (your own, plus public and community ones), newest first, with filters and pagination. Use it to browse; use search_lenses to find lenses by topic.",
            ),
            list_lenses,
        ),
        declare(
            meta(
                "search_lenses",
                Read,
                "Search lenses",
                "Full-text search over lens titles, descriptions and templates; best matches first. Every word must match the start of a word. Use it to find a lens by topic before get_lens or run_lens.",
            ),
            search_lenses,
        ),
        declare(
            meta(
                "get_lens",
                Read,
                "Get a lens",
                "Get one lens with its head version: the template body and its parameters. Use it to see what a lens asks for before running it.",
            ),
            get_lens,
        ),
        declare(
            meta(
                "list_lens_versions",
                Read,
                "List lens versions",
                "List every version of a lens, newest first, with semver, changelog and parameters (no template bodies).",
            ),
            list_lens_versions,
        ),
        declare(
            meta(
                "get_lens_version",
                Read,
                "Get a lens version",
                "Get one version of a lens, by version_id or by semver, with its template body and parameters.",
            ),
            get_lens_version,
        ),
        declare(
            meta(
                "extract_lens_params",
                Read,
                "Extract lens parameters",
                "List the parameters of a lens version (label, optional, type, description, default, options) and the tokens as written in its template.",
            ),
            extract_lens_params,
        ),
        declare(
            meta(
                "validate_lens_params",
                Read,
                "Validate lens parameter values",
                "Check values against a lens version's parameters before running it: which required labels are missing, which given labels are unknown, and which values are outside a parameter's options.",
            ),
            validate_lens_params,
        ),
        declare(
            meta(
                "create_lens",
                Write,
                "Create a lens",
                "Create a lens from a prompt template. Parameters are inferred from its tokens: [[Name]] required, [[Name!]] optional, [[Name:type]] typed; params may add descriptions, defaults and allowed options. The first version is 1.0.0.",
            ),
            create_lens,
        ),
        declare(
            meta(
                "update_lens",
                Write,
                "Update a lens",
                "Make a new immutable version of your lens (and change its title, description or visibility). The semver bump follows the parameter change: removed or newly required parameters are major, new optional ones minor, template-only changes patch.",
            ),
            update_lens,
        ),
        declare(
            meta(
                "fork_lens",
                Write,
                "Fork a lens",
                "Copy a lens you can read (its head template and parameters, or a template you give) into a new lens you own, recording where it came from.",
            ),
            fork_lens,
        ),
        declare(
            meta(
                "set_lens_visibility",
                Write,
                "Set lens visibility",
                "Change who can see your lens: public (everyone), community (signed-in lensers) or private (only you).",
            ),
            set_lens_visibility,
        ),
        declare(
            meta(
                "run_lens",
                Execute,
                "Run a lens",
                "Resolve a lens template with parameter values into a ready prompt. Calls no model: execute the returned resolved_prompt yourself. A missing required value answers MISSING_PARAMS naming the labels to ask the user for.",
            ),
            run_lens,
        ),
        declare(
            meta(
                "find_and_run_lens",
                Execute,
                "Find and run a lens",
                "Search for a lens by topic and resolve the best match in one call. Answers status ready (with the prompt), needs_params (with the labels to ask for) or no_match, and names other candidates.",
            ),
            find_and_run_lens,
        ),
        declare(
            meta(
                "archive_lens",
                Destructive,
                "Archive a lens",
                "Hide your lens from listings and search without deleting it; it stays readable by id and restore_lens brings it back.",
            ),
            archive_lens,
        ),
        declare(
            meta(
                "delete_lens",
                Destructive,
                "Delete a lens",
                "Delete your lens: it disappears from every read. Needs confirm: true once the user has agreed.",
            ),
            delete_lens,
        ),
        declare(
            meta(
                "restore_lens",
                Write,
                "Restore a lens",
                "Bring an archived lens of yours back into listings and search.",
            ),
            restore_lens,
        ),
        declare(
            meta(
                "diff_lens_versions",
                Read,
                "Diff lens versions",
                "Compare two versions of a lens: parameter changes, the semver bump they call for, and a unified diff of the templates.",
            ),
            diff_lens_versions,
        ),
    ]
}
