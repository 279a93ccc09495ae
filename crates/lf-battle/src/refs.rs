//! Contender references are checked. A contender stands for something, its
//! `contender_ref_id`, and with the [`ContenderRefs`] the composition root
//! gave the service ([`BattleService::with_contender_refs`]),
//! [`BattleService::add_contender`] takes a reference only when it names
//! what the contender's type says, for the caller:
//!
//! - `human`: a lenser (an account, or the caller itself);
//! - `ai_agent`: an AI Lenser the caller may enter (see
//!   [`ContenderRefs::agent`]); its owner answers for it;
//! - `workflow`: a workflow the caller can read; its owner answers for it;
//! - `ai_model`: a model the caller may use ([`ContenderRefs::model`]).
//!
//! Anything else is NOT_FOUND (field `contender_ref_id`) naming the type,
//! and nothing is saved. The port answers "not found" alike for what does
//! not exist and for what the caller may not see, so no refusal tells a
//! caller that someone else's private AI Lenser or workflow exists.
//!
//! Without a [`ContenderRefs`] (lf-battle embedded alone), a reference is
//! taken as given, and the caller names an agent's or workflow's owner in
//! [`crate::NewContender::owner`].
//!
//! [`BattleService::with_contender_refs`]: crate::BattleService::with_contender_refs
//! [`BattleService::add_contender`]: crate::BattleService::add_contender

use async_trait::async_trait;
use lf_core::{ContenderRefId, Detail, LenserId, LfError, LfResult, Principal, WorkflowId};

use crate::model::ContenderType;

/// What contender references name, looked up where the lensers, AI
/// Lensers, workflows and models live. Each answer is `None` (or `false`)
/// alike for what is missing and for what `p` may not see or enter.
/// [`crate::BattleService::add_contender`] asks it of every new contender
/// (once given it by [`crate::BattleService::with_contender_refs`]): a
/// `human` is a lenser (or the caller), an `ai_agent` an AI Lenser
/// [`ContenderRefs::agent`] names, a `workflow` one `p` can read, an
/// `ai_model` a model [`ContenderRefs::model`] accepts; anything else is
/// NOT_FOUND on `contender_ref_id` naming the type, and nothing is saved.
/// A model-profile lookup belongs in [`ContenderRefs::model`].
#[async_trait]
pub trait ContenderRefs: Send + Sync {
    /// Whether `id` is a lenser's account.
    async fn lenser(&self, id: LenserId) -> LfResult<bool>;

    /// The owner of AI Lenser `id`, when `p` may enter it in a battle: an
    /// active AI Lenser `p` may act as (its owner, a co-owner, an operator,
    /// the agent itself, the service), whose policy allows joining battles
    /// (`can_join_battles`).
    async fn agent(&self, p: &Principal, id: LenserId) -> LfResult<Option<LenserId>>;

    /// The owner of workflow `id`, when `p` may read it.
    async fn workflow(&self, p: &Principal, id: WorkflowId) -> LfResult<Option<LenserId>>;

    /// Whether `reference` names a model `p` may use as an `ai_model`
    /// contender: a model profile `p` may use (the operator's, its own, a
    /// public one), or an AI Lenser `p` can read (its model and persona
    /// answer).
    async fn model(&self, p: &Principal, reference: ContenderRefId) -> LfResult<bool>;
}

/// The lenser who answers for a contender of `kind` standing for
/// `reference`, when `refs` say `p` may enter it (none for a model); the
/// NOT_FOUND of [`not_found`] otherwise.
pub(crate) async fn check(
    refs: &dyn ContenderRefs,
    p: &Principal,
    kind: ContenderType,
    reference: ContenderRefId,
) -> LfResult<Option<LenserId>> {
    let uuid = reference.as_uuid();
    let found = match kind {
        ContenderType::Human => {
            let id = LenserId::from_uuid(uuid);
            (p.lenser() == Some(id) || refs.lenser(id).await?).then_some(Some(id))
        }
        ContenderType::AiAgent => refs.agent(p, LenserId::from_uuid(uuid)).await?.map(Some),
        ContenderType::Workflow => refs.workflow(p, WorkflowId::from_uuid(uuid)).await?.map(Some),
        ContenderType::AiModel => refs.model(p, reference).await?.then_some(None),
    };
    found.ok_or_else(|| not_found(kind, reference))
}

/// The refusal of a reference that names nothing `p` may enter as `kind`.
pub fn not_found(kind: ContenderType, reference: ContenderRefId) -> LfError {
    let message = match kind {
        ContenderType::Human => format!(
            "No lenser {reference} to enter as a human contender: its contender_ref_id is the id of a lenser's account."
        ),
        ContenderType::AiAgent => format!(
            "No AI Lenser {reference} you can enter as an ai_agent contender: give an active AI Lenser you own, co-own or operate whose policy has can_join_battles on (list_ai_lensers shows them)."
        ),
        ContenderType::Workflow => format!(
            "No workflow {reference} you can read to enter as a workflow contender: give a workflow you own or that is shared with you (list_workflows shows them)."
        ),
        ContenderType::AiModel => format!(
            "No model {reference} you can use as an ai_model contender: give the id of a model profile (list_model_profiles) or of an AI Lenser you can read (list_ai_lensers)."
        ),
    };
    LfError::new(lf_core::ErrorCode::NotFound, message)
        .with_field("contender_ref_id")
        .with_detail("contender_type", Detail::Str(kind.as_str().into()))
}
