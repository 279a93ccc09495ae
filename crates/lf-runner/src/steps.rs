//! Which executor runs which node type: [`STEPS`], the one table of them,
//! and [`Executors::all`], which fills a runner's executors from it with
//! what they need ([`StepNeeds`], handed over by the composition root).
//!
//! Every type of lf-workflow's node catalog has exactly one row, and no
//! row names a type the catalog lacks (the test below holds the two
//! together). A type the engine settles itself (a trigger, a timer, a
//! loop, a try scope: [`Role::is_executed`] is false) is
//! [`Runs::Engine`] and gets no executor; `run_workflow` refuses a
//! workflow with a step of a type that has none.
//!
//! [`Role::is_executed`]: lf_workflow::engine::Role::is_executed

use std::sync::Arc;

use lf_core::ModelProvider;
use lf_egress::Egress;
use lf_lens::LensService;
use lf_workflow::ConnectionService;
use lf_workflow::kv::{KvStore, Namespace};

use crate::agent_step::{AgentSteps, AgentTools};
use crate::compose::OwnServices;
use crate::contender::ContenderSteps;
use crate::executor::{Executor, Executors, Pure};
use crate::kv::{KvKind, KvSteps};
use crate::mcp::{McpClient, McpSteps, ThirdParty};
use crate::model::{ModelSteps, Pricing};
use crate::outbound::{Outbound, OutboundKind};

/// What runs a node type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Runs {
    /// The engine itself, no executor (lf-workflow's `engine/`).
    Engine,
    /// A function of the node's config and input: lf-workflow's
    /// `exec::run_pure` (executor.rs's `Pure`).
    Pure,
    /// One model call, through the model provider ([`ModelSteps`],
    /// model.rs).
    Model,
    /// A request through the egress guard, with a saved connection
    /// ([`Outbound`], outbound/).
    Outbound(OutboundKind),
    /// The workflow owner's key-value store ([`KvSteps`], kv.rs).
    Kv(KvKind),
    /// A run of another workflow, waited for ([`OwnServices`], compose.rs).
    SubWorkflow,
    /// A draft battle made as the workflow's owner ([`OwnServices`],
    /// compose.rs).
    BattleCreate,
    /// An AI Lenser's tool-calling loop ([`AgentSteps`], agent_step.rs).
    Agent,
    /// An AI Lenser's answer to a battle ([`ContenderSteps`],
    /// contender.rs).
    Contender,
    /// A tool of an outside MCP server ([`McpSteps`], mcp/).
    Mcp,
}

/// Every node type of the catalog and what runs it, by what runs it.
pub(crate) const STEPS: &[(&str, Runs)] = &[
    // The engine: a trigger's output is the run's inputs, a wait is a
    // durable timer, a loop runs its body per item, a try scope routes the
    // failures of the steps it guards.
    ("manual_trigger", Runs::Engine),
    ("schedule_trigger", Runs::Engine),
    ("webhook_trigger", Runs::Engine),
    ("event_trigger", Runs::Engine),
    ("form_input_trigger", Runs::Engine),
    ("wait_delay", Runs::Engine),
    ("loop_map", Runs::Engine),
    ("try_catch", Runs::Engine),
    // A function of config and input.
    ("json_transform", Runs::Pure),
    ("set_variables", Runs::Pure),
    ("extract_field", Runs::Pure),
    ("rename_field", Runs::Pure),
    ("data_mapper", Runs::Pure),
    ("filter_items", Runs::Pure),
    ("aggregate", Runs::Pure),
    ("sort", Runs::Pure),
    ("deduplicate", Runs::Pure),
    ("split_in_batches", Runs::Pure),
    ("text_splitter", Runs::Pure),
    ("output_parser", Runs::Pure),
    ("if_condition", Runs::Pure),
    ("switch", Runs::Pure),
    ("merge", Runs::Pure),
    ("stop_return", Runs::Pure),
    ("error_catch", Runs::Pure),
    ("noop", Runs::Pure),
    ("logger", Runs::Pure),
    ("debug_inspector", Runs::Pure),
    // One model call.
    ("lens", Runs::Model),
    ("lens_execute", Runs::Model),
    ("prompt_template", Runs::Model),
    ("summarizer", Runs::Model),
    ("classifier", Runs::Model),
    ("translator", Runs::Model),
    ("judge_evaluator", Runs::Model),
    // Outside the server, through the egress guard.
    ("http_request", Runs::Outbound(OutboundKind::HttpRequest)),
    ("webhook_sender", Runs::Outbound(OutboundKind::Webhook)),
    ("graphql_request", Runs::Outbound(OutboundKind::Graphql)),
    ("slack_notify", Runs::Outbound(OutboundKind::Slack)),
    ("discord_notify", Runs::Outbound(OutboundKind::Discord)),
    ("telegram_notify", Runs::Outbound(OutboundKind::Telegram)),
    ("email_send", Runs::Outbound(OutboundKind::Email)),
    ("github_read", Runs::Outbound(OutboundKind::GithubRead)),
    ("github_issue_create", Runs::Outbound(OutboundKind::GithubIssue)),
    ("rss_feed", Runs::Outbound(OutboundKind::Feed)),
    ("mcp_tool", Runs::Mcp),
    // The workflow owner's key-value store.
    ("kv_store_read", Runs::Kv(KvKind::Read(Namespace::Kv))),
    ("kv_store_write", Runs::Kv(KvKind::Write(Namespace::Kv))),
    ("cache_read", Runs::Kv(KvKind::Read(Namespace::Cache))),
    ("cache_write", Runs::Kv(KvKind::Write(Namespace::Cache))),
    ("rate_limit", Runs::Kv(KvKind::RateLimit)),
    // The server's own services.
    ("sub_workflow", Runs::SubWorkflow),
    ("battle_create", Runs::BattleCreate),
    // AI Lensers.
    ("agent_execute", Runs::Agent),
    ("contender_run", Runs::Contender),
];

/// What runs `node_type` (a canonical name), if it is in [`STEPS`].
pub(crate) fn runs(node_type: &str) -> Option<Runs> {
    STEPS.iter().find(|(t, _)| *t == node_type).map(|(_, r)| *r)
}

/// What the executors of [`Executors::all`] need: the composition root makes it
/// before the services the steps call exist, and binds those later
/// ([`OwnServices::bind`], [`OwnServices::bind_agents`]); a step run
/// before fails with `not_ready`.
pub struct StepNeeds {
    /// What the model steps and the agent steps ask.
    pub model: Arc<dyn ModelProvider>,
    /// What their model calls cost.
    pub pricing: Pricing,
    /// The lenses a lens step resolves, as the run's starter reads them.
    pub lenses: LensService,
    /// The outbound steps' guarded HTTP client (its policy also judges
    /// SMTP servers).
    pub egress: Egress,
    /// The saved connections the outbound steps open.
    pub connections: Arc<ConnectionService>,
    /// The workflow owners' key-value stores and caches.
    pub kv: Arc<dyn KvStore>,
    /// The tools an agent step calls, and the battle answers a contender
    /// step asks for.
    pub agent_tools: Arc<dyn AgentTools>,
    /// The server's services, for sub-workflows, battles, agents and team
    /// runs.
    pub own: OwnServices,
    /// The hygiene and schema check of outside MCP tools' results and
    /// arguments (lf-tools', handed over by lf-server).
    pub third_party: Arc<dyn ThirdParty>,
}

impl Executors {
    /// An executor for every node type that has one: every row of
    /// steps.rs's table but the engine's.
    pub fn all(needs: StepNeeds) -> Executors {
        let StepNeeds { model, pricing, lenses, egress, connections, kv, agent_tools, own, third_party } =
            needs;
        let mcp: Arc<dyn Executor> =
            Arc::new(McpSteps::new(McpClient::new(egress.clone()), connections.clone(), third_party));
        let pure: Arc<dyn Executor> = Arc::new(Pure);
        let asks: Arc<dyn Executor> =
            Arc::new(ModelSteps::new(model.clone(), lenses, pricing).resolving(own.clone()));
        let outbound = Outbound::new(egress, connections);
        let kv = KvSteps::new(kv);
        let agent: Arc<dyn Executor> =
            Arc::new(AgentSteps::new(model, agent_tools.clone(), own.clone(), pricing));
        let contender: Arc<dyn Executor> = Arc::new(ContenderSteps::new(agent_tools, own.clone()));
        Executors::none().fill(|runs| match runs {
            Runs::Engine => None,
            Runs::Pure => Some(pure.clone()),
            Runs::Model => Some(asks.clone()),
            Runs::Outbound(kind) => Some(outbound.step(kind)),
            Runs::Kv(kind) => Some(kv.step(kind)),
            Runs::SubWorkflow => Some(own.sub_workflow()),
            Runs::BattleCreate => Some(own.battle_create()),
            Runs::Agent => Some(agent.clone()),
            Runs::Contender => Some(contender.clone()),
            Runs::Mcp => Some(mcp.clone()),
        })
    }

    /// Adds the executor `of` gives for each row of [`STEPS`] (none where
    /// it gives none).
    pub(crate) fn fill(self, mut of: impl FnMut(Runs) -> Option<Arc<dyn Executor>>) -> Executors {
        STEPS.iter().fold(self, |e, (t, runs)| match of(*runs) {
            Some(x) => e.with(t, x),
            None => e,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use lf_workflow::NodeKind;
    use lf_workflow::catalog::{Category, catalog};
    use lf_workflow::engine::Role;
    use lf_workflow::exec::PURE_TYPES;

    use super::*;

    #[test]
    fn every_type_of_the_catalog_has_one_row_and_no_row_another_type() {
        let rows: Vec<&str> = STEPS.iter().map(|(t, _)| *t).collect();
        let unique: BTreeSet<&str> = rows.iter().copied().collect();
        assert_eq!(unique.len(), rows.len(), "a type has two rows: {rows:?}");
        let types: BTreeSet<&str> = catalog().entries().iter().map(|e| e.node_type).collect();
        let missing: Vec<_> = types.difference(&unique).collect();
        let extra: Vec<_> = unique.difference(&types).collect();
        assert!(missing.is_empty(), "catalog types without a row: {missing:?}");
        assert!(extra.is_empty(), "rows of types the catalog lacks: {extra:?}");
    }

    #[test]
    fn the_engine_rows_are_the_types_the_engine_settles() {
        for e in catalog().entries() {
            let kind = match e.category {
                Category::Trigger => NodeKind::Trigger,
                Category::Lens => NodeKind::Lens,
                _ => NodeKind::Tool,
            };
            let executed = Role::of(kind, e.node_type).is_executed();
            assert_eq!(runs(e.node_type) != Some(Runs::Engine), executed, "{}", e.node_type);
        }
    }

    #[test]
    fn the_pure_rows_are_lf_workflow_s_pure_types() {
        let rows: BTreeSet<&str> = STEPS.iter().filter(|(_, r)| *r == Runs::Pure).map(|(t, _)| *t).collect();
        assert_eq!(rows, PURE_TYPES.iter().copied().collect());
        let pure = Executors::pure();
        for (t, r) in STEPS {
            assert_eq!(pure.handles(t), *r == Runs::Pure, "{t}");
        }
    }
}
