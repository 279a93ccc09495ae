//! The one [`ModelResolver`]: what a caller names as a model (a profile's
//! id or name, an operator endpoint, a bare model name) turned into what to
//! ask and where. Which profile a name means is lf-workflow's rule
//! ([`ProfileService::locate`]); here it meets the operator's endpoints,
//! the saved connection a profile names (its secret opened for the call,
//! never shown) and the egress policy: its base URL as written, and the
//! addresses its host resolves to at every request.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use lf_core::{ErrorCode, LfError, LfResult, ModelResolver, Principal, ResolvedModel};
use lf_model::Endpoints;
use lf_workflow::profile::{Endpoint, Located, ModelProfile, ProfileService};
use lf_workflow::{ConnectionService, EgressPolicy};

/// Resolves model names over the profiles, the operator's endpoints and
/// saved connections.
#[derive(Clone)]
pub struct Resolver {
    profiles: ProfileService,
    endpoints: Arc<Endpoints>,
    connections: ConnectionService,
    egress: Arc<dyn EgressPolicy>,
    /// Looks up a connection's host as the egress guard does: every
    /// address checked when the request is made.
    dns: Arc<dyn lf_egress::Resolve>,
}

impl Resolver {
    /// Over `profiles` and `endpoints`, opening `connections`; a
    /// connection's base URL is refused by `egress` as written, and its
    /// host's addresses by `dns` ([`lf_egress::guarded_dns`]) at each
    /// request.
    pub fn new(
        profiles: ProfileService,
        endpoints: Arc<Endpoints>,
        connections: ConnectionService,
        egress: Arc<dyn EgressPolicy>,
        dns: Arc<dyn lf_egress::Resolve>,
    ) -> Self {
        Self { profiles, endpoints, connections, egress, dns }
    }

    async fn resolved(&self, p: &Principal, field: &'static str, named: &str) -> LfResult<ResolvedModel> {
        match self.profiles.locate(p, field, named).await? {
            Located::Operator { endpoint, model } => {
                let provider = self.operator(field, &endpoint)?;
                Ok(ResolvedModel::on(provider, endpoint, model))
            }
            Located::Profile(profile) => self.of_profile(field, profile).await,
        }
    }

    fn operator(&self, field: &'static str, name: &str) -> LfResult<Arc<dyn lf_core::ModelProvider>> {
        self.endpoints.get(name).ok_or_else(|| {
            LfError::new(
                ErrorCode::NotFound,
                format!("The operator no longer declares the endpoint {}.", LfError::excerpt(name)),
            )
            .with_field(field)
        })
    }

    async fn of_profile(&self, field: &'static str, profile: ModelProfile) -> LfResult<ResolvedModel> {
        let provider = match &profile.endpoint {
            Endpoint::Operator(name) => self.operator(field, name)?,
            Endpoint::Connection(r) => {
                // Whatever went wrong opening it, the answer names the
                // connection only: a secret, or whose it is, never shows.
                let unusable = |why: &str| {
                    LfError::invalid_argument(format!(
                        "The model profile {}'s connection cannot be used: {why}.",
                        profile.name.as_str()
                    ))
                    .with_field(field)
                };
                let (connection, secret) = self
                    .connections
                    .open_secret(profile.owner, r.as_str())
                    .await
                    .map_err(|_| unusable("it is gone or its secret does not open"))?;
                let base = connection.settings.get("base_url").and_then(|v| v.as_str()).unwrap_or_default();
                if let Some(refusal) = self.egress.refusal(base) {
                    return Err(unusable(&format!(
                        "the egress guard refuses its base_url ({})",
                        refusal.reason
                    )));
                }
                let key = secret.expose_str().map_err(|_| unusable("its secret is not text"))?;
                lf_model::connection_client(base, Some(key), &profile.model, self.dns.clone())
                    .map_err(|_| unusable("its base_url or key is not usable"))?
            }
        };
        Ok(ResolvedModel {
            provider,
            endpoint: profile.endpoint.as_wire(),
            model: Some(profile.model),
            profile: Some(profile.id),
            temperature: profile.parameters.temperature,
            top_p: profile.parameters.top_p,
            max_tokens: profile.parameters.max_tokens,
            seed: profile.parameters.seed,
            stop: profile.parameters.stop,
            price_per_million_input: profile.prices.per_million_input,
            price_per_million_output: profile.prices.per_million_output,
        })
    }
}

impl ModelResolver for Resolver {
    fn resolve<'a>(
        &'a self,
        p: &'a Principal,
        field: &'static str,
        named: &'a str,
    ) -> Pin<Box<dyn Future<Output = LfResult<ResolvedModel>> + Send + 'a>> {
        Box::pin(self.resolved(p, field, named))
    }
}
