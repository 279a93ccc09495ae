//! The model-profile use cases, and [`ProfileService::locate`], the rule
//! that reads what a caller names as a model.

use std::sync::Arc;

use lf_core::{Clock, LfError, LfResult, ModelProfileId, Page, PageRequest, Principal, SystemClock};

use super::model::{
    DEFAULT_ENDPOINT, Endpoint, MODEL_PROVIDER, ModelProfile, OperatorEndpoint, Parameters, Prices,
    ProfileName, ProfileVisibility, parse_model_name, profile_not_found,
};
use super::store::ModelProfileStore;
use crate::connection::ConnectionStore;
use crate::lookup::EgressPolicy;

/// A profile to save, as given.
#[derive(Clone, Debug, Default)]
pub struct NewProfile {
    pub name: String,
    pub endpoint: String,
    pub model: String,
    pub parameters: Parameters,
    pub price_per_million_input: f64,
    pub price_per_million_output: f64,
    pub visibility: Option<String>,
}

/// What an update changes; `None` keeps it.
#[derive(Clone, Debug, Default)]
pub struct ProfileUpdate {
    pub name: Option<String>,
    pub endpoint: Option<String>,
    pub model: Option<String>,
    pub parameters: Option<Parameters>,
    pub price_per_million_input: Option<f64>,
    pub price_per_million_output: Option<f64>,
    pub visibility: Option<String>,
}

/// A profile as listed: the operator's (one per declared endpoint that
/// names a model) or a saved one.
#[derive(Clone, Debug, PartialEq)]
pub enum ProfileView {
    Operator(OperatorEndpoint),
    Saved(ModelProfile),
}

/// What a caller's model name means ([`ProfileService::locate`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Located {
    /// A saved profile the caller may use.
    Profile(ModelProfile),
    /// `model` on the operator's endpoint `endpoint`.
    Operator { endpoint: String, model: Option<String> },
}

/// Saves, lists, updates and archives model profiles, and reads what a
/// caller names as a model.
#[derive(Clone)]
pub struct ProfileService {
    store: Arc<dyn ModelProfileStore>,
    connections: Arc<dyn ConnectionStore>,
    operator: Vec<OperatorEndpoint>,
    egress: Option<Arc<dyn EgressPolicy>>,
    clock: Arc<dyn Clock>,
}

impl ProfileService {
    /// Over `store`, checking connection endpoints in `connections`; the
    /// operator declares only `default` until [`ProfileService::with_operator`].
    pub fn new(store: Arc<dyn ModelProfileStore>, connections: Arc<dyn ConnectionStore>) -> Self {
        let default = OperatorEndpoint { name: DEFAULT_ENDPOINT.to_owned(), model: None };
        Self { store, connections, operator: vec![default], egress: None, clock: Arc::new(SystemClock) }
    }

    /// The operator's endpoints (`default` first, then `[[models]]`).
    pub fn with_operator(mut self, endpoints: Vec<OperatorEndpoint>) -> Self {
        let mut all = vec![OperatorEndpoint { name: DEFAULT_ENDPOINT.to_owned(), model: None }];
        for e in endpoints {
            match all.iter_mut().find(|o| o.name == e.name) {
                Some(o) => *o = e,
                None => all.push(e),
            }
        }
        self.operator = all;
        self
    }

    /// The egress policy a connection endpoint's base URL must pass.
    pub fn with_egress(mut self, egress: Arc<dyn EgressPolicy>) -> Self {
        self.egress = Some(egress);
        self
    }

    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn store(&self) -> &Arc<dyn ModelProfileStore> {
        &self.store
    }

    /// The operator's endpoints, `default` first.
    pub fn operator(&self) -> &[OperatorEndpoint] {
        &self.operator
    }

    /// Saves a profile of the caller's. INVALID_ARGUMENT for a bad field,
    /// NOT_FOUND on `endpoint` for an endpoint the operator does not declare
    /// or a connection the caller has not saved (or not of provider
    /// `openai_compatible`), INVALID_ARGUMENT on `endpoint` when the egress
    /// guard refuses its base URL, CONFLICT for a name taken. Nothing is
    /// saved unless all of it passes.
    pub async fn create(&self, p: &Principal, new: NewProfile) -> LfResult<ModelProfile> {
        let owner = p.owner_for_create()?;
        let endpoint = Endpoint::parse(&new.endpoint)?;
        let now = self.clock.now();
        let profile = ModelProfile {
            id: ModelProfileId::new(),
            owner,
            name: ProfileName::parse(&new.name)?,
            model: parse_model_name("model", &new.model)?,
            parameters: new.parameters.check()?,
            prices: Prices::new(new.price_per_million_input, new.price_per_million_output)?,
            visibility: visibility(new.visibility.as_deref())?.unwrap_or(ProfileVisibility::Private),
            endpoint,
            created_at: now,
            updated_at: now,
            archived_at: None,
        };
        self.check_endpoint(&profile).await?;
        self.store.add_profile(&profile).await?;
        Ok(profile)
    }

    /// The operator's profiles, then the saved ones the caller reads (its
    /// own and the public ones), one page of them.
    pub async fn list(&self, p: &Principal, page: PageRequest) -> LfResult<Page<ProfileView>> {
        let operator: Vec<ProfileView> = self.operator.iter().cloned().map(ProfileView::Operator).collect();
        let n = operator.len() as u64;
        let mut items: Vec<ProfileView> =
            operator.into_iter().skip(page.offset() as usize).take(page.limit() as usize).collect();
        let room = page.limit() as usize - items.len();
        let rest = PageRequest::new(Some(room.max(1) as i64), Some(page.offset().saturating_sub(n) as i64))?;
        let saved = self.store.list_profiles(p.reach(), rest).await?;
        items.extend(saved.items.into_iter().take(room).map(ProfileView::Saved));
        Ok(Page { items, total: n + saved.total, limit: page.limit(), offset: page.offset() })
    }

    /// The caller's profile `id` for a change: NOT_FOUND when the caller
    /// cannot read it (or it is an operator's, which no tool changes),
    /// FORBIDDEN when it is someone else's public profile, CONFLICT when
    /// archived.
    async fn own(&self, p: &Principal, id: ModelProfileId) -> LfResult<ModelProfile> {
        let profile = self
            .store
            .profile(p.reach(), id)
            .await?
            .ok_or_else(|| profile_not_found("profile_id", &id.to_string()))?;
        if !p.may_write(profile.owner) {
            return Err(LfError::forbidden("Only its owner changes a model profile."));
        }
        if profile.archived_at.is_some() {
            return Err(LfError::conflict("This model profile is archived; create a new one."));
        }
        Ok(profile)
    }

    /// Changes what `update` names of the caller's profile `id`, with the
    /// checks of [`ProfileService::create`].
    pub async fn update(
        &self,
        p: &Principal,
        id: ModelProfileId,
        update: ProfileUpdate,
    ) -> LfResult<ModelProfile> {
        let old = self.own(p, id).await?;
        let mut new = old.clone();
        if let Some(name) = update.name {
            new.name = ProfileName::parse(&name)?;
        }
        if let Some(endpoint) = update.endpoint {
            new.endpoint = Endpoint::parse(&endpoint)?;
        }
        if let Some(model) = update.model {
            new.model = parse_model_name("model", &model)?;
        }
        if let Some(parameters) = update.parameters {
            new.parameters = parameters.check()?;
        }
        new.prices = Prices::new(
            update.price_per_million_input.unwrap_or(old.prices.per_million_input),
            update.price_per_million_output.unwrap_or(old.prices.per_million_output),
        )?;
        if let Some(v) = visibility(update.visibility.as_deref())? {
            new.visibility = v;
        }
        self.check_endpoint(&new).await?;
        new.updated_at = self.clock.now().max(old.updated_at);
        self.store.save_profile(&new, old.updated_at).await?;
        Ok(new)
    }

    /// Archives the caller's profile `id`: it is no longer listed, named or
    /// used; what recorded it keeps its id.
    /// CONFIRMATION_REQUIRED unless `confirm`.
    pub async fn archive(&self, p: &Principal, id: ModelProfileId, confirm: bool) -> LfResult<ModelProfile> {
        if !confirm {
            return Err(LfError::confirmation_required("Archiving a model profile"));
        }
        let old = self.own(p, id).await?;
        let mut new = old.clone();
        let now = self.clock.now().max(old.updated_at);
        new.archived_at = Some(now);
        new.updated_at = now;
        self.store.save_profile(&new, old.updated_at).await?;
        Ok(new)
    }

    /// What `named` means as a model for `p` (`field` names it in errors):
    ///
    /// 1. a UUID: a profile `p` may use (an operator's, its own, a public
    ///    one), else NOT_FOUND, alike for what is missing and what `p` may
    ///    not read;
    /// 2. the name of one of `p`'s own profiles;
    /// 3. the name of an operator's endpoint: its model there;
    /// 4. anything else: that model on `default`.
    pub async fn locate(&self, p: &Principal, field: &'static str, named: &str) -> LfResult<Located> {
        let named = named.trim();
        if let Ok(uuid) = lf_core::parse_uuid(field, named) {
            let id = ModelProfileId::from_uuid(uuid);
            if let Some(o) = self.operator.iter().find(|o| o.profile_id() == id) {
                return Ok(Located::Operator { endpoint: o.name.clone(), model: o.model.clone() });
            }
            return match self.store.profile(p.reach(), id).await? {
                Some(found) if found.archived_at.is_none() => Ok(Located::Profile(found)),
                _ => Err(profile_not_found(field, named)),
            };
        }
        if let (Some(owner), Ok(name)) = (p.lenser(), ProfileName::parse(named))
            && let Some(found) = self.store.profile_named(owner, &name).await?
        {
            return Ok(Located::Profile(found));
        }
        if let Some(o) = self.operator.iter().find(|o| o.name == named && o.model.is_some()) {
            return Ok(Located::Operator { endpoint: o.name.clone(), model: o.model.clone() });
        }
        Ok(Located::Operator {
            endpoint: DEFAULT_ENDPOINT.to_owned(),
            model: Some(parse_model_name(field, named)?),
        })
    }

    /// The endpoint of `profile` exists for its owner and passes the egress
    /// guard. Errors name `endpoint` and never a connection's secret.
    async fn check_endpoint(&self, profile: &ModelProfile) -> LfResult<()> {
        let not_found = |m: String| LfError::new(lf_core::ErrorCode::NotFound, m).with_field("endpoint");
        match &profile.endpoint {
            Endpoint::Operator(name) => {
                if !self.operator.iter().any(|o| &o.name == name) {
                    let names: Vec<&str> = self.operator.iter().map(|o| o.name.as_str()).collect();
                    return Err(not_found(format!(
                        "The operator declares no endpoint {}; declared: {}. Or give connection:<ref> for a saved {MODEL_PROVIDER} connection of yours.",
                        LfError::excerpt(name),
                        names.join(", ")
                    )));
                }
            }
            Endpoint::Connection(r) => {
                let saved = self.connections.list_connections(profile.owner).await?;
                let Some(c) =
                    saved.iter().find(|c| &c.connection_ref == r && c.provider.as_str() == MODEL_PROVIDER)
                else {
                    return Err(not_found(format!(
                        "You have no saved {MODEL_PROVIDER} connection {}. Save one with `connection add --provider {MODEL_PROVIDER}` and a base_url setting, its API key as the secret.",
                        LfError::excerpt(r.as_str())
                    )));
                };
                let base = c.settings.get("base_url").and_then(|v| v.as_str()).unwrap_or_default();
                if !(base.starts_with("http://") || base.starts_with("https://")) {
                    return Err(LfError::invalid_argument(format!(
                        "The connection {} has no base_url setting (an http or https URL such as https://api.openai.com/v1).",
                        LfError::excerpt(r.as_str())
                    ))
                    .with_field("endpoint"));
                }
                if let Some(refusal) = self.egress.as_ref().and_then(|e| e.refusal(base)) {
                    let opened = refusal.opened_by.map_or_else(
                        || "nothing opens it".to_owned(),
                        |o| format!("the operator opens it with {o}"),
                    );
                    return Err(LfError::invalid_argument(format!(
                        "The egress guard refuses the base_url of connection {}: {} ({opened}).",
                        LfError::excerpt(r.as_str()),
                        refusal.reason
                    ))
                    .with_field("endpoint"));
                }
            }
        }
        Ok(())
    }
}

fn visibility(v: Option<&str>) -> LfResult<Option<ProfileVisibility>> {
    v.map(|v| ProfileVisibility::parse(v.trim())).transpose()
}
