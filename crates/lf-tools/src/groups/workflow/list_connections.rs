use lf_core::{LfResult, Page};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct ListConnectionsIn {}
}

/// A saved connection: what a step's connector names. Never its secret.
#[derive(Serialize, JsonSchema)]
pub struct ConnectionOut {
    /// What a step's connector.connection_ref says.
    pub connection_ref: String,
    pub provider: String,
    /// Its non-secret settings.
    pub settings: Map<String, Value>,
    pub created_at: String,
}

pub struct ListConnections;

impl Tool for ListConnections {
    const NAME: &'static str = "list_connections";
    const TITLE: &'static str = "List saved connections";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "List your saved connections (ref, provider, non-secret settings, never a secret), sorted by ref: what a step's connector.connection_ref may name.";
    const DIFFERS_FROM_SPEC: &'static str = "Not in the hosted original's reference documents, whose workflows named connectors it kept elsewhere.";
    type Input = ListConnectionsIn;
    type Output = PageOut<ConnectionOut>;

    async fn call(ctx: Ctx, i: ListConnectionsIn) -> LfResult<PageOut<ConnectionOut>> {
        let page = i.page()?;
        let all = ctx.services.connections.list(&ctx.principal).await?;
        let total = all.len() as u64;
        let items = all.into_iter().skip(page.offset() as usize).take(page.limit() as usize).collect();
        Ok(PageOut::from_page(Page::new(items, total, page), |c| ConnectionOut {
            connection_ref: c.connection_ref.as_str().to_owned(),
            provider: c.provider.as_str().to_owned(),
            settings: c.settings,
            created_at: c.created_at.to_rfc3339(),
        }))
    }
}
