//! The Lens use cases. Each takes the caller's [`Principal`]; reads go through
//! the store with the caller's reach, writes check ownership first.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use lf_core::{
    Clock, Detail, DomainEvent, ErrorCode, EventKind, EventSink, LensId, LfError, LfResult, NoEvents, Page,
    PageRequest, Principal, RunId, SystemClock, Timestamp, WorkflowId,
};

use crate::model::{
    Bump, Changelog, Description, Lens, LensDraft, LensFilter, LensPatch, LensRun, LensStatus, LensVersion,
    Param, SearchQuery, Semver, TemplateBody, Title, VersionSelector, VersionSummary, Visibility,
};
use crate::store::LensStore;
use crate::template::{Template, Unterminated, label_key};
use crate::versioning::{
    Change, ParamChange, ParamDeclaration, build_params, check_option, keep_declared_flags,
};

/// Most parameter values one call may carry.
pub const MAX_VALUES: usize = 500;
/// Most characters of one parameter value.
pub const MAX_VALUE_CHARS: usize = 100_000;

/// Parameter values by label, matched case-insensitively (an exact spelling
/// wins over a case-insensitive one; among equal keys the first wins).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParamValues {
    /// `(lowercased label, label as given, value)` in the order given.
    entries: Vec<(String, String, String)>,
    exact: HashMap<String, usize>,
    folded: HashMap<String, usize>,
}

impl ParamValues {
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks the bounds: at most [`MAX_VALUES`] entries of at most
    /// [`MAX_VALUE_CHARS`] characters each. `field` names the argument.
    pub fn parse<K: Into<String>, V: Into<String>>(
        field: &str,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> LfResult<Self> {
        let mut out = Self::new();
        for (k, v) in pairs {
            if out.entries.len() == MAX_VALUES {
                return Err(LfError::invalid_argument(format!(
                    "{field} may hold at most {MAX_VALUES} values"
                ))
                .with_field(field));
            }
            let (k, v) = (k.into(), v.into());
            if v.chars().nth(MAX_VALUE_CHARS).is_some() {
                return Err(LfError::invalid_argument(format!(
                    "{field}[{}] must be at most {MAX_VALUE_CHARS} characters long",
                    LfError::excerpt(&k)
                ))
                .with_field(field));
            }
            out = out.insert(k, v);
        }
        Ok(out)
    }

    pub fn insert(mut self, label: impl Into<String>, value: impl Into<String>) -> Self {
        let label = label.into();
        let key = label_key(&label);
        let at = self.entries.len();
        self.exact.entry(label.clone()).or_insert(at);
        self.folded.entry(key.clone()).or_insert(at);
        self.entries.push((key, label, value.into()));
        self
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value for `label`.
    pub fn get(&self, label: &str) -> Option<&str> {
        let at = self.exact.get(label).or_else(|| self.folded.get(&label_key(label)))?;
        Some(&self.entries[*at].2)
    }

    /// The labels as given that match none of `params`.
    pub fn unknown(&self, params: &[Param]) -> Vec<String> {
        let keys: HashSet<String> = params.iter().map(Param::key).collect();
        self.entries.iter().filter(|(lk, _, _)| !keys.contains(lk)).map(|(_, k, _)| k.clone()).collect()
    }
}

/// A new lens.
#[derive(Clone, Debug)]
pub struct NewLens {
    pub title: Title,
    pub description: Option<Description>,
    pub body: TemplateBody,
    pub visibility: Visibility,
    pub params: Vec<ParamDeclaration>,
}

/// A change to a lens: a new version when the body or parameters change, and
/// metadata changes in the same step.
#[derive(Clone, Debug)]
pub struct LensUpdate {
    pub lens_id: LensId,
    pub body: Option<TemplateBody>,
    pub params: Option<Vec<ParamDeclaration>>,
    pub title: Option<Title>,
    pub description: Option<Description>,
    pub visibility: Option<Visibility>,
    pub changelog: Option<Changelog>,
}

impl LensUpdate {
    pub fn new(lens_id: LensId) -> Self {
        Self {
            lens_id,
            body: None,
            params: None,
            title: None,
            description: None,
            visibility: None,
            changelog: None,
        }
    }
}

/// A fork of a lens the caller can read.
#[derive(Clone, Debug)]
pub struct ForkLens {
    pub source: LensId,
    pub title: Option<Title>,
    pub body: Option<TemplateBody>,
    pub visibility: Visibility,
}

/// A lens with one of its versions (the head unless asked otherwise).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LensView {
    pub lens: Lens,
    pub version: LensVersion,
}

/// What `update` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdateOutcome {
    pub lens: Lens,
    /// The head after the update (the new version when one was made).
    pub version: LensVersion,
    pub previous_semver: Semver,
    /// `None` when the body and parameters were unchanged: no version was made.
    pub bump: Option<Bump>,
}

/// The parameters of a version and its tokens as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extracted {
    pub lens: Lens,
    pub version: LensVersion,
    pub raw_tokens: Vec<String>,
    /// The body's unterminated `[[` (see [`Template::warnings`]).
    pub warnings: Vec<Unterminated>,
}

/// The outcome of checking values against a version's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validation {
    pub valid: bool,
    pub missing: Vec<String>,
    pub unknown: Vec<String>,
    /// `(label, reason)` for values outside a parameter's options.
    pub invalid: Vec<(String, String)>,
    pub total_params: usize,
    pub provided: usize,
    /// The body's unterminated `[[` (see [`Template::warnings`]): a label
    /// the author meant as a parameter, which no value can fill.
    pub warnings: Vec<Unterminated>,
}

/// A resolved prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub lens: Lens,
    pub version: LensVersion,
    pub prompt: String,
    pub params_used: Vec<String>,
    /// `ceil(characters / 4)`: an estimate, not a tokenizer count.
    pub estimated_input_tokens: u64,
    /// Set when the run was recorded against a workflow.
    pub run_id: Option<RunId>,
}

/// A lens other than the best match of a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub id: LensId,
    pub title: String,
}

/// The three answers of `find_and_run`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FindAndRun {
    Ready { resolved: Box<Resolved>, other_candidates: Vec<Candidate> },
    NeedsParams { view: Box<LensView>, missing: Vec<String>, other_candidates: Vec<Candidate> },
    NoMatch { query: String },
}

/// How two versions of a lens differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionDiff {
    pub lens_id: LensId,
    pub from: VersionSummary,
    pub to: VersionSummary,
    pub changes: Vec<ParamChange>,
    pub body_changed: bool,
    /// The bump the change from `from` to `to` calls for, if any.
    pub bump: Option<Bump>,
    /// A unified diff of the bodies (empty when they are equal).
    pub body_diff: String,
}

/// `ceil(chars / 4)`.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// The Lens use cases over a store.
#[derive(Clone)]
pub struct LensService {
    pub(crate) store: Arc<dyn LensStore>,
    clock: Arc<dyn Clock>,
    pub(crate) events: Arc<dyn EventSink>,
}

impl LensService {
    pub fn new(store: Arc<dyn LensStore>) -> Self {
        Self::with_clock(store, Arc::new(SystemClock))
    }

    pub fn with_clock(store: Arc<dyn LensStore>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock, events: Arc::new(NoEvents) }
    }

    /// Tells `events` of each lens created (`lens.created`: by
    /// `create_lens` or `fork_lens`) and each new version (`lens.updated`).
    pub fn with_events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.events = events;
        self
    }

    fn tell(&self, kind: EventKind, lens: &Lens, version: &LensVersion) {
        self.events.publish(
            DomainEvent::new(kind, lens.owner, lens.visibility != Visibility::Private)
                .with("lens_id", lens.id.to_string())
                .with("title", lens.title.as_str())
                .with("version_id", version.id.to_string())
                .with("semver", version.semver.to_string()),
        );
    }

    pub fn store(&self) -> &Arc<dyn LensStore> {
        &self.store
    }

    pub(crate) fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// A lens the caller may change: NOT_FOUND when out of reach, FORBIDDEN
    /// when readable but someone else's.
    async fn load_for_write(&self, p: &Principal, id: LensId) -> LfResult<Lens> {
        let lens = self.store.get_lens(p.reach(), id).await?;
        if !p.may_write(lens.owner) {
            return Err(LfError::forbidden(format!(
                "Lens {id} belongs to another lenser: you can read and run it but not change it. Use fork_lens to make your own copy."
            )));
        }
        Ok(lens)
    }

    pub async fn create(&self, p: &Principal, new: NewLens) -> LfResult<LensView> {
        let owner = p.owner_for_create()?;
        let params = build_params(&new.body, &new.params, &[])?;
        let (lens, version) = LensDraft {
            agent: p.agent(),
            description: new.description,
            visibility: new.visibility,
            ..LensDraft::new(owner, new.title, new.body, params)
        }
        .build(self.now());
        self.store.create_lens(&lens, &version).await?;
        self.tell(EventKind::LensCreated, &lens, &version);
        Ok(LensView { lens, version })
    }

    pub async fn get(&self, p: &Principal, id: LensId) -> LfResult<LensView> {
        self.view(p, id, VersionSelector::Head).await
    }

    /// A lens with the chosen version.
    pub async fn view(&self, p: &Principal, id: LensId, which: VersionSelector) -> LfResult<LensView> {
        match self.store.get_lens_and_version(p.reach(), id, which).await {
            Ok((lens, version)) => Ok(LensView { lens, version }),
            Err(e) => Err(self.explain_missing(p, id, which, e).await),
        }
    }

    /// The chosen version of a readable lens.
    pub(crate) async fn version(
        &self,
        p: &Principal,
        id: LensId,
        which: VersionSelector,
    ) -> LfResult<LensVersion> {
        match self.store.get_version(p.reach(), id, which).await {
            Ok(version) => Ok(version),
            Err(e) => Err(self.explain_missing(p, id, which, e).await),
        }
    }

    pub async fn list(&self, p: &Principal, filter: &LensFilter, page: PageRequest) -> LfResult<Page<Lens>> {
        self.store.list_lenses(p.reach(), filter, page).await
    }

    pub async fn search(
        &self,
        p: &Principal,
        query: &SearchQuery,
        visibility: Option<Visibility>,
        page: PageRequest,
    ) -> LfResult<Page<Lens>> {
        self.store.search_lenses(p.reach(), query, visibility, page).await
    }

    pub async fn versions(&self, p: &Principal, id: LensId) -> LfResult<Vec<VersionSummary>> {
        self.store.list_versions(p.reach(), id).await
    }

    pub async fn extract_params(
        &self,
        p: &Principal,
        id: LensId,
        which: VersionSelector,
    ) -> LfResult<Extracted> {
        let LensView { lens, version } = self.view(p, id, which).await?;
        let template = Template::parse(version.body.as_str());
        let raw_tokens = template.raw_tokens().into_iter().map(str::to_owned).collect();
        let warnings = template.warnings();
        Ok(Extracted { lens, version, raw_tokens, warnings })
    }

    pub async fn validate_params(
        &self,
        p: &Principal,
        id: LensId,
        which: VersionSelector,
        values: &ParamValues,
    ) -> LfResult<Validation> {
        let LensView { version, .. } = self.view(p, id, which).await?;
        let mut missing = Vec::new();
        let mut invalid = Vec::new();
        for param in &version.params {
            match values.get(&param.label) {
                None if !param.optional => missing.push(param.label.clone()),
                None => {}
                Some(v) => {
                    if let Err(e) = check_option(param, v) {
                        invalid.push((param.label.clone(), e.message().to_owned()));
                    }
                }
            }
        }
        let unknown = values.unknown(&version.params);
        Ok(Validation {
            valid: missing.is_empty() && unknown.is_empty() && invalid.is_empty(),
            missing,
            unknown,
            invalid,
            total_params: version.params.len(),
            provided: values.len(),
            warnings: crate::template::lint(version.body.as_str()),
        })
    }

    /// Resolves a version: MISSING_PARAMS naming every missing label in body
    /// order; INVALID_ARGUMENT for a value outside a parameter's options.
    pub fn resolve(
        lens: &Lens,
        version: &LensVersion,
        values: &ParamValues,
    ) -> LfResult<(String, Vec<String>)> {
        let template = Template::parse(version.body.as_str());
        let keys: Vec<String> = version.params.iter().map(Param::key).collect();
        let mut resolved: Vec<&str> = Vec::with_capacity(template.params().len());
        let mut used = Vec::new();
        let mut missing = Vec::new();
        for (i, decl) in template.params().iter().enumerate() {
            // The stored parameters were built from this very body, in body
            // order, so parameter i is token i's; a body edited behind the
            // store's back falls back to a search, then to what the token says.
            let at = if keys.get(i) == Some(&decl.key) {
                Some(i)
            } else {
                keys.iter().position(|k| *k == decl.key)
            };
            let param = at.map(|at| &version.params[at]);
            let optional = param.map_or(decl.optional, |p| p.optional);
            match values.get(&decl.label) {
                Some(v) => {
                    if let Some(param) = param {
                        check_option(param, v)?;
                    }
                    used.push(param.map_or(&decl.label, |p| &p.label).clone());
                    resolved.push(v);
                }
                None if optional => resolved.push(param.and_then(|p| p.default.as_deref()).unwrap_or("")),
                None => {
                    missing.push(param.map_or(&decl.label, |p| &p.label).clone());
                    resolved.push("");
                }
            }
        }
        if !missing.is_empty() {
            return Err(missing_params(lens, version, missing));
        }
        Ok((template.resolve(&resolved), used))
    }

    pub async fn run(
        &self,
        p: &Principal,
        id: LensId,
        which: VersionSelector,
        values: &ParamValues,
        workflow_id: Option<WorkflowId>,
    ) -> LfResult<Resolved> {
        let LensView { lens, version } = self.view(p, id, which).await?;
        let (prompt, params_used) = Self::resolve(&lens, &version, values)?;
        let mut run_id = None;
        if let Some(workflow_id) = workflow_id {
            let run = LensRun {
                id: RunId::new(),
                lens_id: lens.id,
                version_id: version.id,
                workflow_id,
                lenser: p.lenser(),
                agent: p.agent(),
                params_used: params_used.clone(),
                created_at: self.now(),
            };
            self.store.record_run(&run).await?;
            run_id = Some(run.id);
        }
        let estimated_input_tokens = estimate_tokens(&prompt);
        Ok(Resolved { lens, version, prompt, params_used, estimated_input_tokens, run_id })
    }

    /// Searches, takes the best hit and runs the version `which` names
    /// (its head, or the version of a label it has).
    pub async fn find_and_run(
        &self,
        p: &Principal,
        query: &SearchQuery,
        raw_query: &str,
        values: &ParamValues,
        visibility: Option<Visibility>,
        which: VersionSelector,
    ) -> LfResult<FindAndRun> {
        let hits = self.store.search_lenses(p.reach(), query, visibility, PageRequest::first(5)).await?;
        let mut hits = hits.items.into_iter();
        let Some(best) = hits.next() else {
            return Ok(FindAndRun::NoMatch { query: raw_query.to_owned() });
        };
        let other_candidates = hits.map(|l| Candidate { id: l.id, title: l.title.into_string() }).collect();
        let version = self.version(p, best.id, which).await?;
        match Self::resolve(&best, &version, values) {
            Ok((prompt, params_used)) => {
                let estimated_input_tokens = estimate_tokens(&prompt);
                let resolved = Resolved {
                    lens: best,
                    version,
                    prompt,
                    params_used,
                    estimated_input_tokens,
                    run_id: None,
                };
                Ok(FindAndRun::Ready { resolved: Box::new(resolved), other_candidates })
            }
            Err(e) if e.code() == ErrorCode::MissingParams => {
                let missing = version
                    .params
                    .iter()
                    .filter(|p| !p.optional && values.get(&p.label).is_none())
                    .map(|p| p.label.clone())
                    .collect();
                Ok(FindAndRun::NeedsParams {
                    view: Box::new(LensView { lens: best, version }),
                    missing,
                    other_candidates,
                })
            }
            Err(e) => Err(e),
        }
    }

    pub async fn update(&self, p: &Principal, update: LensUpdate) -> LfResult<UpdateOutcome> {
        let lens = self.load_for_write(p, update.lens_id).await?;
        let head = self.store.get_version(p.reach(), lens.id, VersionSelector::Head).await?;
        let body = update.body.unwrap_or_else(|| head.body.clone());
        let declarations = keep_declared_flags(
            head.body.as_str(),
            &head.params,
            body.as_str(),
            update.params.as_deref().unwrap_or(&[]),
        );
        let params = build_params(&body, &declarations, &head.params)?;
        let change = Change::between(head.body.as_str(), &head.params, body.as_str(), &params);
        let now = self.now();
        let patch = LensPatch {
            title: update.title,
            description: update.description.map(Some),
            visibility: update.visibility,
            updated_at: Some(now),
            ..LensPatch::default()
        };
        let bump = change.bump();
        let version = match bump {
            None => {
                if update.changelog.is_some() {
                    return Err(LfError::invalid_argument(
                        "changelog was given but template_body and params are unchanged, so no new version is made; drop changelog or change the template",
                    )
                    .with_field("changelog"));
                }
                self.store.update_lens(lens.id, &patch).await?;
                head.clone()
            }
            Some(b) => {
                let version = LensVersion {
                    id: Default::default(),
                    lens_id: lens.id,
                    semver: head.semver.bump(b),
                    body,
                    params,
                    changelog: update.changelog.map_or_else(|| change.changelog(), Changelog::into_string),
                    agent: p.agent(),
                    created_at: now,
                };
                self.store.append_version(lens.id, head.id, &version, &patch).await?;
                version
            }
        };
        let lens = self.store.get_lens(p.reach(), lens.id).await?;
        if bump.is_some() {
            self.tell(EventKind::LensUpdated, &lens, &version);
        }
        Ok(UpdateOutcome { lens, version, previous_semver: head.semver, bump })
    }

    pub async fn fork(&self, p: &Principal, fork: ForkLens) -> LfResult<LensView> {
        let owner = p.owner_for_create()?;
        let source = self.store.get_lens(p.reach(), fork.source).await?;
        let head = self.store.get_version(p.reach(), source.id, VersionSelector::Head).await?;
        let (body, params) = match fork.body {
            Some(body) => {
                let declarations = keep_declared_flags(head.body.as_str(), &head.params, body.as_str(), &[]);
                let params = build_params(&body, &declarations, &head.params)?;
                (body, params)
            }
            None => {
                let params =
                    head.params.iter().map(|p| Param { id: Default::default(), ..p.clone() }).collect();
                (head.body.clone(), params)
            }
        };
        let title = match fork.title {
            Some(t) => t,
            None => Title::parse(
                format!("Fork of {}", source.title).chars().take(Title::MAX_CHARS).collect::<String>(),
            )?,
        };
        let (lens, version) = LensDraft {
            agent: p.agent(),
            description: source.description.clone(),
            visibility: fork.visibility,
            parent_lens_id: Some(source.id),
            changelog: format!("Forked from \"{}\" {}.", source.title, head.semver),
            ..LensDraft::new(owner, title, body, params)
        }
        .build(self.now());
        self.store.create_lens(&lens, &version).await?;
        self.tell(EventKind::LensCreated, &lens, &version);
        Ok(LensView { lens, version })
    }

    async fn patch(
        &self,
        p: &Principal,
        id: LensId,
        patch: impl FnOnce(&Lens, Timestamp) -> LensPatch,
    ) -> LfResult<Lens> {
        let lens = self.load_for_write(p, id).await?;
        let patch = patch(&lens, self.now());
        self.store.update_lens(id, &patch).await?;
        self.store.get_lens(p.reach(), id).await
    }

    pub async fn set_visibility(&self, p: &Principal, id: LensId, visibility: Visibility) -> LfResult<Lens> {
        self.patch(p, id, |_, now| LensPatch {
            visibility: Some(visibility),
            updated_at: Some(now),
            ..Default::default()
        })
        .await
    }

    /// Hides a lens from listings and search; it stays readable by id. Idempotent.
    pub async fn archive(&self, p: &Principal, id: LensId) -> LfResult<Lens> {
        self.patch(p, id, |lens, now| LensPatch {
            status: Some(LensStatus::Archived),
            archived_at: Some(Some(lens.archived_at.unwrap_or(now))),
            updated_at: Some(now),
            ..Default::default()
        })
        .await
    }

    /// Brings an archived lens back. Idempotent.
    pub async fn restore(&self, p: &Principal, id: LensId) -> LfResult<Lens> {
        self.patch(p, id, |_, now| LensPatch {
            status: Some(LensStatus::Published),
            archived_at: Some(None),
            updated_at: Some(now),
            ..Default::default()
        })
        .await
    }

    /// Soft-deletes a lens: it disappears from every read. Needs `confirm`.
    pub async fn delete(&self, p: &Principal, id: LensId, confirm: bool) -> LfResult<(Lens, Timestamp)> {
        if !confirm {
            return Err(LfError::confirmation_required("Deleting a lens"));
        }
        let lens = self.load_for_write(p, id).await?;
        let now = self.now();
        self.store
            .update_lens(
                id,
                &LensPatch { deleted_at: Some(now), updated_at: Some(now), ..Default::default() },
            )
            .await?;
        Ok((lens, now))
    }

    pub async fn diff(
        &self,
        p: &Principal,
        id: LensId,
        from: VersionSelector,
        to: VersionSelector,
    ) -> LfResult<VersionDiff> {
        let a = self.version(p, id, from).await?;
        let b = self.version(p, id, to).await?;
        let change = Change::between(a.body.as_str(), &a.params, b.body.as_str(), &b.params);
        let body_diff = if change.body_changed {
            similar::TextDiff::from_lines(a.body.as_str(), b.body.as_str())
                .unified_diff()
                .context_radius(3)
                .header(&a.semver.to_string(), &b.semver.to_string())
                .to_string()
        } else {
            String::new()
        };
        Ok(VersionDiff {
            lens_id: id,
            from: VersionSummary::from(&a),
            to: VersionSummary::from(&b),
            bump: change.bump(),
            body_changed: change.body_changed,
            changes: change.params,
            body_diff,
        })
    }
}

fn missing_params(lens: &Lens, version: &LensVersion, missing: Vec<String>) -> LfError {
    let n = missing.len();
    let all = version
        .params
        .iter()
        .map(|p| {
            let mut m = vec![
                ("label".to_owned(), Detail::Str(p.label.clone())),
                ("optional".to_owned(), Detail::Bool(p.optional)),
            ];
            if let Some(d) = &p.description {
                m.push(("description".to_owned(), Detail::Str(d.clone())));
            }
            Detail::Map(m)
        })
        .collect();
    LfError::new(
        ErrorCode::MissingParams,
        format!(
            "Lens \"{}\" needs {n} more parameter{} before it can run. Ask the user for: {}. Then call run_lens again with param_values including these labels.",
            lens.title,
            if n == 1 { "" } else { "s" },
            missing.join(", ")
        ),
    )
    .with_detail("missing", Detail::Strs(missing))
    .with_detail("all_parameters", Detail::List(all))
    .with_detail("lens_id", Detail::Str(lens.id.to_string()))
    .with_detail("version_id", Detail::Str(version.id.to_string()))
    .with_detail("lens_title", Detail::Str(lens.title.to_string()))
}
