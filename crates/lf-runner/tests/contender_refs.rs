//! Contender references are checked, on the in-memory stores with the
//! server's own lookups ([`lf_runner::OwnServices`] as the battles'
//! `ContenderRefs`): a `human` contender names a lenser, an `ai_agent` an
//! AI Lenser its creator may enter, a `workflow` one they can read, an
//! `ai_model` an AI Lenser they can see. Anything else is NOT_FOUND naming
//! the type, with nothing saved, and someone else's private AI Lenser or
//! workflow is refused exactly as one that does not exist.

use lf_agent::{AgentHandle, AgentPatch, NewAgent, Role};
use lf_battle::{BattleTitle, BattleType, ContenderType, DisplayName, NewBattle, NewContender, TaskPrompt};
use lf_core::{BattleId, ContenderRefId, Detail, ErrorCode, LenserId, LfError, Principal, Scopes};
use serde_json::json;

mod support;
use support::Stack;

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

/// A draft battle of `creator`'s of type `t` with room for 26.
async fn battle(s: &Stack, creator: LenserId, t: BattleType) -> BattleId {
    let mut new = NewBattle::new(
        BattleTitle::parse("Whose haiku").unwrap(),
        TaskPrompt::parse("Write a haiku about the sea.").unwrap(),
    );
    new.battle_type = Some(t);
    new.judging_mode =
        Some(lf_battle::JudgingMode::CommunityVote).filter(|_| t == BattleType::HumanVsHumanOpenVotes);
    new.max_contenders = Some(lf_battle::MaxContenders::parse(26).unwrap());
    s.battles.create(&lenser(creator), new).await.unwrap().id
}

/// Adds a contender of `kind` standing for `reference` as `who`.
async fn add(
    s: &Stack,
    who: LenserId,
    battle_id: BattleId,
    kind: ContenderType,
    reference: uuid::Uuid,
) -> Result<lf_battle::Contender, LfError> {
    let new = NewContender {
        battle_id,
        display_name: DisplayName::parse(format!("{kind} {reference}")).unwrap(),
        contender_type: kind,
        reference: ContenderRefId::from_uuid(reference),
        slot: None,
        owner: None,
    };
    s.battles.add_contender(&lenser(who), new).await
}

/// An active AI Lenser of `owner`'s; it may join battles when `joins`.
async fn agent(s: &Stack, owner: LenserId, handle: &str, joins: bool) -> LenserId {
    let mut new =
        NewAgent::new(AgentHandle::parse(handle).unwrap(), lf_agent::DisplayName::parse("Ada").unwrap());
    new.policy.can_join_battles = joins;
    s.agents.create(&lenser(owner), new).await.unwrap().id
}

async fn contenders(s: &Stack, id: BattleId) -> usize {
    s.battles.get(&Principal::Service { acting_as: None }, id).await.unwrap().contenders.len()
}

/// The refusal, checked to be NOT_FOUND on `contender_ref_id` naming
/// `kind`, with its message's id replaced by `<id>` (to compare refusals
/// of different references).
fn refusal(e: &LfError, kind: ContenderType, reference: uuid::Uuid) -> String {
    assert_eq!(e.code(), ErrorCode::NotFound, "{e:?}");
    let detail = |k: &str| e.details().iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    assert_eq!(detail("field"), Some(Detail::Str("contender_ref_id".into())), "{e:?}");
    assert_eq!(detail("contender_type"), Some(Detail::Str(kind.as_str().into())), "{e:?}");
    assert!(
        e.message().contains(&format!("{kind} contender")),
        "the message names the type: {}",
        e.message()
    );
    e.message().replace(&reference.to_string(), "<id>")
}

/// Adding `reference` as `kind` fails as a reference that names nothing
/// does, and saves nothing.
async fn refused_as_missing(
    s: &Stack,
    who: LenserId,
    b: BattleId,
    kind: ContenderType,
    reference: uuid::Uuid,
) {
    let before = contenders(s, b).await;
    let e = add(s, who, b, kind, reference).await.unwrap_err();
    let missing = uuid::Uuid::new_v4();
    let none = add(s, who, b, kind, missing).await.unwrap_err();
    assert_eq!(refusal(&e, kind, reference), refusal(&none, kind, missing), "no inference from the refusal");
    assert_eq!(e.details().len(), none.details().len());
    assert_eq!(contenders(s, b).await, before, "nothing saved");
}

#[tokio::test]
async fn a_human_contender_is_a_lenser() {
    let s = Stack::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    s.lensers.add(bob, "bob");
    let b = battle(&s, alice, BattleType::HumanVsHumanOpenVotes).await;

    let c = add(&s, alice, b, ContenderType::Human, bob.as_uuid()).await.expect("an account joins");
    assert_eq!(c.owner, Some(bob), "a human answers for themselves");
    add(&s, alice, b, ContenderType::Human, alice.as_uuid()).await.expect("the caller joins as themselves");

    // An AI Lenser is no human, and an id of nobody is nobody.
    let ada = agent(&s, alice, "ada_bot", true).await;
    refused_as_missing(&s, alice, b, ContenderType::Human, ada.as_uuid()).await;
    let e = add(&s, alice, b, ContenderType::Human, uuid::Uuid::new_v4()).await.unwrap_err();
    assert!(e.message().starts_with("No lenser "), "{}", e.message());
}

#[tokio::test]
async fn an_ai_agent_contender_is_an_ai_lenser_its_creator_may_enter() {
    let s = Stack::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let b = battle(&s, alice, BattleType::AiVsAi).await;

    let ada = agent(&s, alice, "ada_bot", true).await;
    let c = add(&s, alice, b, ContenderType::AiAgent, ada.as_uuid()).await.expect("her agent joins");
    assert_eq!(c.owner, Some(alice), "its owner answers for it");

    // Bob's agent, which Alice operates, joins; its owner answers for it.
    let bobs = agent(&s, bob, "bob_bot", true).await;
    s.agents.add_member(&lenser(bob), bobs, alice, Role::Operator).await.unwrap();
    let c = add(&s, alice, b, ContenderType::AiAgent, bobs.as_uuid()).await.expect("an operator enters it");
    assert_eq!(c.owner, Some(bob));

    // Bob's private agent is as missing as none; so are one whose policy
    // keeps it out of battles and an archived one.
    let hidden = agent(&s, bob, "bob_hidden", true).await;
    refused_as_missing(&s, alice, b, ContenderType::AiAgent, hidden.as_uuid()).await;
    let shy = agent(&s, alice, "ada_shy", false).await;
    refused_as_missing(&s, alice, b, ContenderType::AiAgent, shy.as_uuid()).await;
    let off = AgentPatch { can_join_battles: Some(true), ..Default::default() };
    s.agents.update(&lenser(alice), shy, off).await.unwrap();
    add(&s, alice, b, ContenderType::AiAgent, shy.as_uuid()).await.expect("once it may join");
    let gone = agent(&s, alice, "ada_gone", true).await;
    s.agents.archive(&lenser(alice), gone, true).await.unwrap();
    refused_as_missing(&s, alice, b, ContenderType::AiAgent, gone.as_uuid()).await;
    let e = add(&s, alice, b, ContenderType::AiAgent, uuid::Uuid::new_v4()).await.unwrap_err();
    assert!(
        e.message().contains("No AI Lenser") && e.message().contains("ai_agent contender"),
        "{}",
        e.message()
    );
}

#[tokio::test]
async fn a_workflow_contender_is_a_workflow_its_creator_can_read() {
    let s = Stack::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let b = battle(&s, alice, BattleType::WorkflowBattle).await;
    let steps = |visibility: &str| {
        json!({
            "title": "Contender", "visibility": visibility,
            "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "step", "kind": "tool", "name": "Echo", "node_type": "extract_field", "config": {"path": "$.task_prompt"}}
            ],
            "connections": [{"from_step": "start", "to_step": "step", "input_parameter": "input"}]
        })
    };
    let hers = support::create_workflow(&s.service, alice, steps("private")).await;
    let bobs_public = support::create_workflow(&s.service, bob, steps("public")).await;
    let bobs_private = support::create_workflow(&s.service, bob, steps("private")).await;

    let c = add(&s, alice, b, ContenderType::Workflow, hers.as_uuid()).await.expect("her own joins");
    assert_eq!(c.owner, Some(alice));
    let c =
        add(&s, alice, b, ContenderType::Workflow, bobs_public.as_uuid()).await.expect("a public one joins");
    assert_eq!(c.owner, Some(bob), "its owner answers for it");
    refused_as_missing(&s, alice, b, ContenderType::Workflow, bobs_private.as_uuid()).await;
}

#[tokio::test]
async fn an_ai_model_contender_is_an_ai_lenser_its_creator_can_see() {
    let s = Stack::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let b = battle(&s, alice, BattleType::AiVsAi).await;

    // Its model and persona answer: joining battles is not asked of it.
    let shy = agent(&s, alice, "ada_shy", false).await;
    let c = add(&s, alice, b, ContenderType::AiModel, shy.as_uuid()).await.expect("her agent's model joins");
    assert_eq!(c.owner, None, "the battle's creator submits for a model");

    let bobs = agent(&s, bob, "bob_bot", true).await;
    refused_as_missing(&s, alice, b, ContenderType::AiModel, bobs.as_uuid()).await;
    let e = add(&s, alice, b, ContenderType::AiModel, uuid::Uuid::new_v4()).await.unwrap_err();
    assert!(e.message().contains("ai_model contender"), "{}", e.message());
}

#[tokio::test]
async fn an_ai_model_contender_may_be_a_model_profile_its_creator_may_use() {
    use lf_workflow::profile::{MemoryProfiles, NewProfile, OperatorEndpoint, ProfileService};
    let s = Stack::new();
    let profiles = ProfileService::new(
        std::sync::Arc::new(MemoryProfiles::new()),
        std::sync::Arc::new(lf_workflow::MemoryConnections::new()),
    );
    s.own.bind_profiles(profiles.clone());
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let b = battle(&s, alice, BattleType::AiVsAi).await;
    let new = |name: &str, visibility: &str| NewProfile {
        name: name.into(),
        endpoint: "default".into(),
        model: "llama3.2".into(),
        visibility: Some(visibility.into()),
        ..NewProfile::default()
    };
    let hers = profiles.create(&lenser(alice), new("mine", "private")).await.unwrap();
    let shared = profiles.create(&lenser(bob), new("shared", "public")).await.unwrap();
    let secret = profiles.create(&lenser(bob), new("secret", "private")).await.unwrap();
    let operator = OperatorEndpoint { name: "default".into(), model: None }.profile_id();

    for (id, who) in [
        (hers.id.as_uuid(), "her own"),
        (shared.id.as_uuid(), "a public one"),
        (operator.as_uuid(), "the operator's"),
    ] {
        let c =
            add(&s, alice, b, ContenderType::AiModel, id).await.unwrap_or_else(|e| panic!("{who}: {e:?}"));
        assert_eq!(c.owner, None);
    }
    refused_as_missing(&s, alice, b, ContenderType::AiModel, secret.id.as_uuid()).await;
    // An AI Lenser still names a model.
    let shy = agent(&s, alice, "ada_model", false).await;
    add(&s, alice, b, ContenderType::AiModel, shy.as_uuid()).await.expect("an AI Lenser's model");
}
