//! Every rule of DESIGN §7 through `BattleService` on the in-memory store:
//! who may do what, in which status, with which error code.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use lf_battle::judge::parse_prompt;
use lf_battle::{
    AutoCheck, BattleFilter, BattleService, BattleStatus, BattleTitle, BattleType, ContenderType,
    CriterionDescription, CriterionTitle, DisplayName, JsonSchemaValidator, JudgingMode, LeaderboardOptions,
    MaxContenders, MemoryBattleStore, ModelKey, NewBattle, NewContender, Rationale, Rubric, RubricCriterion,
    ScoreOutcome, Slot, SubmissionText, TaskPrompt, VerdictKind, VotePick,
};
use lf_core::{
    BattleId, ChatRequest, ChatResponse, ContenderId, ContenderRefId, ErrorCode, FixedClock, LenserId,
    LfError, LfResult, ModelProvider, OFFLINE_MODEL_NAME, PageRequest, Principal, Scopes, Timestamp,
};
use pollster::block_on as run;

use BattleStatus::*;

fn code<T: std::fmt::Debug>(r: LfResult<T>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code(),
    }
}

fn field(e: &LfError) -> Option<String> {
    e.details().iter().find(|(k, _)| k == "field").map(|(_, v)| match v {
        lf_core::Detail::Str(s) => s.clone(),
        other => format!("{other:?}"),
    })
}

fn lenser() -> (LenserId, Principal) {
    let id = LenserId::new();
    (id, Principal::Lenser { id, scopes: Scopes::READ_WRITE })
}

/// A provider that answers from a script and records what it was asked.
#[derive(Default)]
struct Scripted {
    answers: Mutex<VecDeque<LfResult<String>>>,
    asked: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    fn new(answers: Vec<LfResult<String>>) -> Arc<Self> {
        Arc::new(Self { answers: Mutex::new(answers.into()), asked: Mutex::default() })
    }
}

#[async_trait]
impl ModelProvider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    async fn chat(&self, request: ChatRequest) -> LfResult<ChatResponse> {
        self.asked.lock().unwrap().push(request);
        let next = self.answers.lock().unwrap().pop_front().expect("the script has an answer");
        next.map(|text| ChatResponse::new(text, "scripted-model"))
    }
}

/// A judge that always prefers whatever it reads first.
struct FirstIsBest;

#[async_trait]
impl ModelProvider for FirstIsBest {
    fn name(&self) -> &str {
        "first-is-best"
    }
    async fn chat(&self, request: ChatRequest) -> LfResult<ChatResponse> {
        let prompt = parse_prompt(&request.user).expect("a judge prompt");
        let items: Vec<String> = prompt
            .entries
            .iter()
            .enumerate()
            .map(|(i, (slot, _))| {
                format!(
                    r#"{{"contender":"{slot}","score":{},"reasoning":"seen {}"}}"#,
                    if i == 0 { 90 } else { 50 },
                    i + 1
                )
            })
            .collect();
        Ok(ChatResponse::new(format!(r#"{{"verdicts":[{}]}}"#, items.join(",")), "biased"))
    }
}

struct World {
    service: BattleService,
    creator: LenserId,
    me: Principal,
}

impl World {
    fn new() -> Self {
        Self::with(|s| s)
    }

    fn with(f: impl FnOnce(BattleService) -> BattleService) -> Self {
        let (creator, me) = lenser();
        let clock = Arc::new(FixedClock::new(Timestamp::from_micros(1_777_000_000_000_000), chrono_step()));
        let service = f(BattleService::new(Arc::new(MemoryBattleStore::new())).with_clock(clock));
        Self { service, creator, me }
    }

    fn create(&self, f: impl FnOnce(NewBattle) -> NewBattle) -> LfResult<lf_battle::Battle> {
        let base = NewBattle::new(
            BattleTitle::parse("Haiku duel").unwrap(),
            TaskPrompt::parse("Write a haiku about autumn leaves falling in the quiet garden.").unwrap(),
        );
        run(self.service.create(&self.me, f(base)))
    }

    fn add(&self, battle: BattleId, kind: ContenderType) -> LfResult<lf_battle::Contender> {
        self.add_ref(battle, kind, ContenderRefId::new(), None)
    }

    fn add_ref(
        &self,
        battle: BattleId,
        kind: ContenderType,
        reference: ContenderRefId,
        owner: Option<LenserId>,
    ) -> LfResult<lf_battle::Contender> {
        run(self.service.add_contender(
            &self.me,
            NewContender {
                battle_id: battle,
                display_name: DisplayName::parse(format!("{kind} contender")).unwrap(),
                contender_type: kind,
                reference,
                slot: None,
                owner,
            },
        ))
    }

    fn status(&self, id: BattleId, to: BattleStatus) -> LfResult<lf_battle::Battle> {
        run(self.service.set_status(&self.me, id, to, true))
    }

    fn submit(
        &self,
        p: &Principal,
        id: BattleId,
        c: ContenderId,
        text: &str,
    ) -> LfResult<lf_battle::SubmitOutcome> {
        run(self.service.submit(p, id, c, SubmissionText::parse(text).unwrap()))
    }

    /// An executing battle of `n` AI models with mode `mode`.
    fn executing(&self, n: usize, mode: JudgingMode) -> (lf_battle::Battle, Vec<lf_battle::Contender>) {
        let b = self
            .create(|nb| NewBattle {
                judging_mode: Some(mode),
                max_contenders: Some(MaxContenders::parse(n as i64).unwrap()),
                rubric: (mode == JudgingMode::RubricScore).then(rubric),
                auto_check: (mode == JudgingMode::AutoScore)
                    .then(|| AutoCheck::contains("autumn", true).unwrap()),
                ..nb
            })
            .unwrap();
        let cs: Vec<_> = (0..n).map(|_| self.add(b.id, ContenderType::AiModel).unwrap()).collect();
        self.status(b.id, Open).unwrap();
        self.status(b.id, Executing).unwrap();
        (b, cs)
    }

    /// A battle in voting where every contender submitted.
    fn voting(&self, n: usize) -> (lf_battle::Battle, Vec<lf_battle::Contender>) {
        let (b, cs) = self.executing(n, JudgingMode::CommunityVote);
        for (i, c) in cs.iter().enumerate() {
            self.submit(&self.me, b.id, c.id, &format!("answer {i}")).unwrap();
        }
        assert_eq!(run(self.service.get(&self.me, b.id)).unwrap().battle.status, Voting);
        (b, cs)
    }
}

fn chrono_step() -> chrono::TimeDelta {
    chrono::TimeDelta::milliseconds(1)
}

fn rubric() -> Rubric {
    let c = |t: &str, w, d: &str| {
        RubricCriterion::new(CriterionTitle::parse(t).unwrap(), w, CriterionDescription::parse(d).unwrap())
            .unwrap()
    };
    Rubric::parse(vec![c("Imagery", 3, "vivid autumn imagery"), c("Form", 1, "five seven five syllables")])
        .unwrap()
}

#[test]
fn create_defaults_and_owner() {
    let w = World::new();
    let b = w.create(|n| n).unwrap();
    assert_eq!(
        (b.status, b.battle_type, b.judging_mode, b.max_contenders.get()),
        (Draft, BattleType::AiVsAi, JudgingMode::AiJudge, 2)
    );
    assert_eq!(b.creator, w.creator);
    let open_votes =
        w.create(|n| NewBattle { battle_type: Some(BattleType::HumanVsHumanOpenVotes), ..n }).unwrap();
    assert_eq!(open_votes.judging_mode, JudgingMode::CommunityVote, "the format picks its default mode");
    let nobody = Principal::Service { acting_as: None };
    let new = NewBattle::new(BattleTitle::parse("x").unwrap(), TaskPrompt::parse("y").unwrap());
    assert_eq!(code(run(w.service.create(&nobody, new))), ErrorCode::MissingLenser);
}

/// DESIGN §5: an AI Lenser acting for its owner is recorded as the writer
/// of the battle and the contenders it makes; its owner owns the battle.
/// What a person makes names no agent.
#[test]
fn an_agent_is_recorded_as_the_writer_of_what_it_makes() {
    let w = World::new();
    let agent_id = LenserId::new();
    let as_agent = Principal::Agent { agent_id, owner: w.creator };
    let new = NewBattle::new(
        BattleTitle::parse("Agent's duel").unwrap(),
        TaskPrompt::parse("Name a sea.").unwrap(),
    );
    let b = run(w.service.create(&as_agent, new)).unwrap();
    assert_eq!((b.creator, b.agent), (w.creator, Some(agent_id)), "the owner owns it, the agent made it");
    let joined = run(w.service.add_contender(
        &as_agent,
        NewContender {
            battle_id: b.id,
            display_name: DisplayName::parse("The agent itself").unwrap(),
            contender_type: ContenderType::AiAgent,
            reference: ContenderRefId::from_uuid(agent_id.as_uuid()),
            slot: None,
            owner: Some(w.creator),
        },
    ))
    .unwrap();
    assert_eq!(joined.agent, Some(agent_id));
    let by_owner = w.add(b.id, ContenderType::AiModel).unwrap();
    assert_eq!(by_owner.agent, None, "the owner adding a contender by hand is no agent");
    let sheet = run(w.service.get(&w.me, b.id)).unwrap();
    assert_eq!(sheet.battle.agent, Some(agent_id), "stored, not only answered");
    let agents: Vec<_> = sheet.contenders.iter().map(|c| (c.id, c.agent)).collect();
    assert_eq!(agents, vec![(joined.id, Some(agent_id)), (by_owner.id, None)]);

    let mine = w.create(|n| n).unwrap();
    assert_eq!((mine.creator, mine.agent), (w.creator, None), "a person's battle names no agent");
    let theirs = w.add(mine.id, ContenderType::AiModel).unwrap();
    assert_eq!(theirs.agent, None);
    let operator = Principal::Service { acting_as: Some(w.creator) };
    let new =
        NewBattle::new(BattleTitle::parse("Operator's").unwrap(), TaskPrompt::parse("Name a lake.").unwrap());
    assert_eq!(run(w.service.create(&operator, new)).unwrap().agent, None, "nor does the service's");
}

#[test]
fn create_refuses_contradictions_naming_the_field() {
    let w = World::new();
    type Edit = Box<dyn FnOnce(NewBattle) -> NewBattle>;
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|n| NewBattle { judging_mode: Some(JudgingMode::RubricScore), ..n }), "rubric"),
        (Box::new(|n| NewBattle { rubric: Some(rubric()), ..n }), "rubric"),
        (Box::new(|n| NewBattle { judging_mode: Some(JudgingMode::AutoScore), ..n }), "auto_check"),
        (Box::new(|n| NewBattle { auto_check: Some(AutoCheck::exact("1").unwrap()), ..n }), "auto_check"),
        (
            Box::new(|n| NewBattle {
                judging_mode: Some(JudgingMode::AutoScore),
                auto_check: Some(AutoCheck::json_schema("{}").unwrap()),
                ..n
            }),
            "auto_check.schema",
        ),
        (
            Box::new(|n| NewBattle {
                judging_mode: Some(JudgingMode::CommunityVote),
                ai_judge_model_key: Some(ModelKey::parse("gpt").unwrap()),
                ..n
            }),
            "ai_judge_model_key",
        ),
        (
            Box::new(|n| NewBattle {
                battle_type: Some(BattleType::HumanVsHumanOpenVotes),
                judging_mode: Some(JudgingMode::AiJudge),
                ..n
            }),
            "judging_mode",
        ),
        (
            Box::new(|n| NewBattle {
                battle_type: Some(BattleType::HumanVsHumanAiVotes),
                judging_mode: Some(JudgingMode::CommunityVote),
                ..n
            }),
            "judging_mode",
        ),
    ];
    for (f, want) in cases {
        let e = w.create(f).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
        assert_eq!(field(&e).as_deref(), Some(want), "{e}");
    }
}

struct ObjectsOnly;

impl JsonSchemaValidator for ObjectsOnly {
    fn check_schema(&self, schema: &str) -> LfResult<()> {
        if schema.contains("\"type\"") {
            Ok(())
        } else {
            Err(LfError::invalid_argument("auto_check.schema needs a type").with_field("auto_check.schema"))
        }
    }
    fn validate(&self, _: &str, instance: &str) -> Result<(), String> {
        if instance.trim_start().starts_with('{') { Ok(()) } else { Err("expected an object".into()) }
    }
}

#[test]
fn json_schema_checks_use_the_supplied_validator() {
    let w = World::with(|s| s.with_json_schema_validator(Arc::new(ObjectsOnly)));
    let with = |schema: &str| {
        let schema = schema.to_owned();
        move |n: NewBattle| NewBattle {
            judging_mode: Some(JudgingMode::AutoScore),
            auto_check: Some(AutoCheck::json_schema(schema).unwrap()),
            ..n
        }
    };
    assert_eq!(code(w.create(with("{}"))), ErrorCode::InvalidArgument, "the validator refuses the schema");
    let b = w.create(with(r#"{"type":"object"}"#)).unwrap();
    let a = w.add(b.id, ContenderType::AiModel).unwrap();
    let c = w.add(b.id, ContenderType::AiAgent).unwrap();
    w.status(b.id, Open).unwrap();
    w.status(b.id, Executing).unwrap();
    w.submit(&w.me, b.id, a.id, r#"{"ok": true}"#).unwrap();
    w.submit(&w.me, b.id, c.id, "[1, 2]").unwrap();
    let ScoreOutcome::Scored(v) = run(w.service.score(&w.me, b.id)).unwrap() else { panic!("scored") };
    assert_eq!((v[0].score.tenths(), v[1].score.tenths()), (1000, 0));
    assert_eq!(v[0].model, "auto_score:json_schema");
    assert!(v[1].reasoning.contains("expected an object"));
}

#[test]
fn drafts_are_private_and_strangers_cannot_change_battles() {
    let w = World::new();
    let b = w.create(|n| n).unwrap();
    let (_, stranger) = lenser();
    assert_eq!(code(run(w.service.get(&stranger, b.id))), ErrorCode::NotFound);
    let add = |p: &Principal| {
        run(w.service.add_contender(
            p,
            NewContender {
                battle_id: b.id,
                display_name: DisplayName::parse("x").unwrap(),
                contender_type: ContenderType::AiModel,
                reference: ContenderRefId::new(),
                slot: None,
                owner: None,
            },
        ))
    };
    assert_eq!(code(add(&stranger)), ErrorCode::NotFound, "another's draft does not exist for you");
    assert_eq!(code(run(w.service.set_status(&stranger, b.id, Open, false))), ErrorCode::NotFound);
    w.status(b.id, Open).unwrap();
    run(w.service.get(&stranger, b.id)).expect("open battles are public");
    assert_eq!(code(add(&stranger)), ErrorCode::Forbidden, "readable but not yours");
    assert_eq!(code(run(w.service.set_status(&stranger, b.id, Executing, false))), ErrorCode::Forbidden);
    let listed = run(w.service.list(&stranger, &BattleFilter::default(), PageRequest::default())).unwrap();
    assert_eq!(listed.total, 1);
    assert_eq!(code(run(w.service.get(&w.me, BattleId::new()))), ErrorCode::NotFound);
}

#[test]
fn contender_types_follow_the_battle_type() {
    use ContenderType::*;
    let w = World::new();
    for bt in BattleType::ALL {
        for ct in ContenderType::ALL {
            let mode = JudgingMode::default_for(*bt);
            let b = w
                .create(|n| NewBattle {
                    battle_type: Some(*bt),
                    judging_mode: Some(mode),
                    max_contenders: Some(MaxContenders::parse(4).unwrap()),
                    ..n
                })
                .unwrap();
            let want = match bt {
                BattleType::AiVsAi => matches!(ct, AiModel | AiAgent),
                BattleType::HumanVsHumanAiVotes | BattleType::HumanVsHumanOpenVotes => *ct == Human,
                BattleType::HumanVsAi => matches!(ct, Human | AiModel | AiAgent),
                BattleType::WorkflowBattle => *ct == Workflow,
                BattleType::LenserBattle => matches!(ct, Human | AiAgent),
            };
            match w.add(b.id, *ct) {
                Ok(c) => assert!(want, "{bt} took {ct}: {c:?}"),
                Err(e) => {
                    assert!(!want, "{bt} refused {ct}: {e}");
                    assert_eq!(
                        (e.code(), field(&e).as_deref()),
                        (ErrorCode::InvalidArgument, Some("contender_type"))
                    );
                }
            }
        }
    }
}

#[test]
fn slots_fill_in_order_until_full_and_only_while_joinable() {
    let w = World::new();
    let b = w.create(|n| NewBattle { max_contenders: Some(MaxContenders::parse(3).unwrap()), ..n }).unwrap();
    let a = w.add(b.id, ContenderType::AiModel).unwrap();
    assert_eq!(a.slot.letter(), 'A');
    let ask = |slot: &str| {
        run(w.service.add_contender(
            &w.me,
            NewContender {
                battle_id: b.id,
                display_name: DisplayName::parse("x").unwrap(),
                contender_type: ContenderType::AiModel,
                reference: ContenderRefId::new(),
                slot: Some(Slot::parse(slot).unwrap()),
                owner: None,
            },
        ))
    };
    let e = ask("D").unwrap_err();
    assert_eq!((e.code(), field(&e).as_deref()), (ErrorCode::InvalidArgument, Some("slot")));
    assert!(e.message().contains("must be B"), "{e}");
    assert_eq!(ask("B").unwrap().slot.letter(), 'B');
    let dup = w.add_ref(b.id, ContenderType::AiModel, a.reference, None).unwrap_err();
    assert_eq!(field(&dup).as_deref(), Some("contender_ref_id"));
    w.status(b.id, Open).unwrap();
    assert_eq!(
        w.add(b.id, ContenderType::AiAgent).unwrap().slot.letter(),
        'C',
        "open battles still take contenders"
    );
    assert_eq!(code(w.add(b.id, ContenderType::AiModel)), ErrorCode::SlotsFull);

    let (running, _) = w.executing(2, JudgingMode::AiJudge);
    assert_eq!(
        code(w.add(running.id, ContenderType::AiModel)),
        ErrorCode::InvalidTransition,
        "not once executing"
    );
}

#[test]
fn human_vs_ai_needs_one_of_each() {
    let w = World::new();
    let b = w
        .create(|n| NewBattle {
            battle_type: Some(BattleType::HumanVsAi),
            max_contenders: Some(MaxContenders::parse(3).unwrap()),
            ..n
        })
        .unwrap();
    w.add(b.id, ContenderType::Human).unwrap();
    w.add(b.id, ContenderType::Human).unwrap();
    let e = w.add(b.id, ContenderType::Human).unwrap_err();
    assert_eq!((e.code(), field(&e).as_deref()), (ErrorCode::InvalidArgument, Some("contender_type")));
    assert!(e.message().contains("AI"), "{e}");
    w.status(b.id, Open).unwrap();
    let e = w.status(b.id, Executing).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidTransition);
    assert!(e.message().contains("one human and one AI"), "{e}");
    w.add(b.id, ContenderType::AiModel).unwrap();
    w.status(b.id, Executing).unwrap();
}

#[test]
fn who_may_submit() {
    let w = World::new();
    let b = w
        .create(|n| NewBattle {
            battle_type: Some(BattleType::LenserBattle),
            max_contenders: Some(MaxContenders::parse(3).unwrap()),
            ..n
        })
        .unwrap();
    let (alice_id, alice) = lenser();
    let (owner_id, owner) = lenser();
    let agent_id = LenserId::new();
    let human =
        w.add_ref(b.id, ContenderType::Human, ContenderRefId::from_uuid(alice_id.as_uuid()), None).unwrap();
    assert_eq!(human.owner, Some(alice_id), "a human answers for themself");
    let agent = w
        .add_ref(b.id, ContenderType::AiAgent, ContenderRefId::from_uuid(agent_id.as_uuid()), Some(owner_id))
        .unwrap();
    let e = w.submit(&w.me, b.id, human.id, "too early").unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidTransition, "no submissions in draft");
    assert_eq!(
        code(w.submit(&alice, b.id, human.id, "x")),
        ErrorCode::NotFound,
        "the draft is not hers to see"
    );
    w.status(b.id, Open).unwrap();

    w.submit(&alice, b.id, human.id, "mine").expect("the human contender submits");
    let (_, stranger) = lenser();
    assert_eq!(code(w.submit(&stranger, b.id, human.id, "x")), ErrorCode::Forbidden);
    assert_eq!(
        code(w.submit(&alice, b.id, agent.id, "x")),
        ErrorCode::Forbidden,
        "not for someone else's agent"
    );
    w.submit(&owner, b.id, agent.id, "by the owner").expect("the agent's owner submits");
    let as_agent = Principal::Agent { agent_id, owner: owner_id };
    let out = w.submit(&as_agent, b.id, agent.id, "by the agent").expect("the agent itself submits");
    assert!(out.replaced, "a resubmission replaces");
    w.submit(&w.me, b.id, agent.id, "by the creator").expect("the creator submits for anyone");
    let sheet = run(w.service.get(&w.me, b.id)).unwrap();
    assert_eq!(sheet.submissions.len(), 2);
    assert_eq!(sheet.submission_of(agent.id).unwrap().text.as_str(), "by the creator");
    assert_eq!(code(w.submit(&w.me, b.id, ContenderId::new(), "x")), ErrorCode::NotFound);
    assert!(
        SubmissionText::parse("x".repeat(100_001)).is_err(),
        "oversized submissions never reach the service"
    );
}

#[test]
fn the_last_submission_advances_by_mode() {
    let w = World::new();
    for (mode, to) in [
        (JudgingMode::CommunityVote, Voting),
        (JudgingMode::AiJudge, Scoring),
        (JudgingMode::RubricScore, Scoring),
        (JudgingMode::AutoScore, Scoring),
    ] {
        let (b, cs) = w.executing(3, mode);
        let first = w.submit(&w.me, b.id, cs[0].id, "a").unwrap();
        assert!(!first.advanced);
        w.submit(&w.me, b.id, cs[1].id, "b").unwrap();
        let last = w.submit(&w.me, b.id, cs[2].id, "c").unwrap();
        assert!(last.advanced && last.status == to, "{mode}: {last:?}");
        assert_eq!(code(w.submit(&w.me, b.id, cs[0].id, "late")), ErrorCode::InvalidTransition);
    }
    // Everyone submitting while open does not advance.
    let b = w.create(|n| n).unwrap();
    let cs = [w.add(b.id, ContenderType::AiModel).unwrap(), w.add(b.id, ContenderType::AiModel).unwrap()];
    w.status(b.id, Open).unwrap();
    w.submit(&w.me, b.id, cs[0].id, "a").unwrap();
    assert_eq!(w.submit(&w.me, b.id, cs[1].id, "b").unwrap().status, Open);
}

#[test]
fn votes() {
    let w = World::new();
    let b = w
        .create(|n| NewBattle {
            battle_type: Some(BattleType::HumanVsHumanOpenVotes),
            max_contenders: Some(MaxContenders::parse(3).unwrap()),
            ..n
        })
        .unwrap();
    let (alice_id, alice) = lenser();
    let a =
        w.add_ref(b.id, ContenderType::Human, ContenderRefId::from_uuid(alice_id.as_uuid()), None).unwrap();
    let bb = w.add(b.id, ContenderType::Human).unwrap();
    let c = w.add(b.id, ContenderType::Human).unwrap();
    w.status(b.id, Open).unwrap();
    w.submit(&w.me, b.id, a.id, "alice's answer").unwrap();
    w.submit(&w.me, b.id, bb.id, "b's answer").unwrap();
    let (_, voter) = lenser();
    let e = run(w.service.cast_vote(&voter, b.id, VotePick::Contender(a.id), None)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidTransition, "no votes outside voting");
    w.status(b.id, Voting).unwrap();

    let out = run(w.service.cast_vote(&voter, b.id, VotePick::Contender(a.id), None)).unwrap();
    assert!(!out.replaced);
    let why = Rationale::parse("Better imagery.").unwrap();
    let out = run(w.service.cast_vote(&voter, b.id, VotePick::Contender(bb.id), Some(why))).unwrap();
    assert!(out.replaced, "a second call replaces the first");
    assert_eq!((out.tally.total, out.tally.votes_for(a.id), out.tally.votes_for(bb.id)), (1, 0, 1));
    let (_, other) = lenser();
    let out = run(w.service.cast_vote(&other, b.id, VotePick::Tie, None)).unwrap();
    assert_eq!((out.tally.total, out.tally.ties), (2, 1), "tie is a valid pick");

    let e = run(w.service.cast_vote(&alice, b.id, VotePick::Contender(a.id), None)).unwrap_err();
    assert_eq!(
        (e.code(), field(&e).as_deref()),
        (ErrorCode::Forbidden, Some("contender_id")),
        "never for oneself"
    );
    run(w.service.cast_vote(&alice, b.id, VotePick::Contender(bb.id), None))
        .expect("alice votes for another");
    let e = run(w.service.cast_vote(&other, b.id, VotePick::Contender(c.id), None)).unwrap_err();
    assert_eq!(
        (e.code(), field(&e).as_deref()),
        (ErrorCode::InvalidArgument, Some("contender_id")),
        "not for a no-show"
    );
    assert_eq!(
        code(run(w.service.cast_vote(&other, b.id, VotePick::Contender(ContenderId::new()), None))),
        ErrorCode::NotFound
    );
    let nobody = Principal::Service { acting_as: None };
    assert_eq!(code(run(w.service.cast_vote(&nobody, b.id, VotePick::Tie, None))), ErrorCode::MissingLenser);

    // An agent may not vote for itself, nor for its owner's contender.
    let (owner_id, _) = lenser();
    let agent_id = LenserId::new();
    let b2 = w.create(|n| NewBattle { battle_type: Some(BattleType::LenserBattle), ..n }).unwrap();
    let ag = w
        .add_ref(b2.id, ContenderType::AiAgent, ContenderRefId::from_uuid(agent_id.as_uuid()), Some(owner_id))
        .unwrap();
    let hu = w.add(b2.id, ContenderType::Human).unwrap();
    w.status(b2.id, Open).unwrap();
    w.submit(&w.me, b2.id, ag.id, "agent answer").unwrap();
    w.submit(&w.me, b2.id, hu.id, "human answer").unwrap();
    w.status(b2.id, Voting).unwrap();
    let as_agent = Principal::Agent { agent_id, owner: owner_id };
    assert_eq!(
        code(run(w.service.cast_vote(&as_agent, b2.id, VotePick::Contender(ag.id), None))),
        ErrorCode::Forbidden
    );
    let as_owner = Principal::Lenser { id: owner_id, scopes: Scopes::READ_WRITE };
    assert_eq!(
        code(run(w.service.cast_vote(&as_owner, b2.id, VotePick::Contender(ag.id), None))),
        ErrorCode::Forbidden
    );
    run(w.service.cast_vote(&as_agent, b2.id, VotePick::Contender(hu.id), None))
        .expect("the agent votes for the human");
}

#[test]
fn community_vote_closes_with_ranks_and_tie_breaks() {
    let w = World::new();
    let (b, cs) = w.voting(4);
    let pick = |c: usize| VotePick::Contender(cs[c].id);
    for p in [pick(2), pick(2), pick(1), pick(3), pick(1), VotePick::Tie] {
        let (_, voter) = lenser();
        run(w.service.cast_vote(&voter, b.id, p, None)).unwrap();
    }
    let e = w.status(b.id, Closed).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidTransition, "voting does not close directly");
    w.status(b.id, Scoring).unwrap();
    assert_eq!(run(w.service.score(&w.me, b.id)).unwrap(), ScoreOutcome::NothingToJudge);
    assert_eq!(code(run(w.service.set_status(&w.me, b.id, Closed, false))), ErrorCode::ConfirmationRequired);
    let closed = w.status(b.id, Closed).unwrap();
    // B and C have 2 votes each; B submitted first, so B wins; both rank 1.
    assert_eq!(closed.winner, Some(cs[1].id));
    let view = run(w.service.score_view(&w.me, b.id)).unwrap();
    let got: Vec<(ContenderId, u8, u8, u32)> =
        view.standings.iter().map(|s| (s.contender_id, s.position, s.rank, s.votes)).collect();
    assert_eq!(
        got,
        vec![(cs[1].id, 1, 1, 2), (cs[2].id, 2, 1, 2), (cs[3].id, 3, 3, 1), (cs[0].id, 4, 4, 0)],
        "votes first, shared ranks, earlier submission breaks ties"
    );
    w.status(b.id, Published).unwrap();
    w.status(b.id, Archived).unwrap();
    assert_eq!(code(w.status(b.id, Open)), ErrorCode::InvalidTransition, "nothing leaves archived");
}

#[test]
fn offline_judge_sees_every_contender_and_names_itself() {
    let w = World::new();
    let (b, cs) = w.executing(5, JudgingMode::AiJudge);
    let texts = [
        "Autumn leaves falling / in the quiet garden now / the garden is still",
        "leaves",
        "Red leaves drift and fall, the quiet garden listens, autumn settles in.",
        "I cannot write poems.",
        "Falling autumn leaves cover the quiet garden path where nobody walks today.",
    ];
    for (c, t) in cs.iter().zip(texts) {
        w.submit(&w.me, b.id, c.id, t).unwrap();
    }
    let e = w.status(b.id, Closed).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidTransition, "no closing before verdicts");
    assert!(e.message().contains("score it first"), "{e}");
    let ScoreOutcome::Scored(v) = run(w.service.score(&w.me, b.id)).unwrap() else { panic!("scored") };
    assert_eq!(v.len(), 5, "every contender is judged, not only A and B");
    assert!(v.iter().all(|v| v.model == OFFLINE_MODEL_NAME && v.position_consistent == Some(true)));
    assert!(v.iter().all(|v| v.reasoning.contains("Offline deterministic judge")));
    assert_eq!(v.iter().filter(|v| v.verdict == VerdictKind::Winner).count(), 1);
    let best = v.iter().max_by_key(|v| v.score).unwrap().contender_id;
    assert!(
        v.iter().find(|v| v.contender_id == cs[1].id).unwrap().score
            < v.iter().find(|v| v.contender_id == best).unwrap().score
    );
    let closed = w.status(b.id, Closed).unwrap();
    assert_eq!(closed.winner, Some(best));
    let again = World::new();
    let (b2, cs2) = again.executing(5, JudgingMode::AiJudge);
    for (c, t) in cs2.iter().zip(texts) {
        again.submit(&again.me, b2.id, c.id, t).unwrap();
    }
    let ScoreOutcome::Scored(v2) = run(again.service.score(&again.me, b2.id)).unwrap() else { panic!() };
    let scores = |v: &[lf_battle::Verdict]| v.iter().map(|x| x.score).collect::<Vec<_>>();
    assert_eq!(scores(&v), scores(&v2), "the offline judge is deterministic");
}

fn answer(pairs: &[(&str, u32)]) -> LfResult<String> {
    let items: Vec<String> = pairs
        .iter()
        .map(|(s, x)| format!(r#"{{"contender":"{s}","score":{x},"reasoning":"r{s}"}}"#))
        .collect();
    Ok(format!(r#"{{"verdicts":[{}]}}"#, items.join(",")))
}

#[test]
fn the_judge_asks_twice_in_reverse_and_retries_a_malformed_answer_once() {
    let script = Scripted::new(vec![
        Ok("I think A is best.".into()),
        answer(&[("A", 80), ("B", 60), ("C", 20)]),
        answer(&[("C", 30), ("B", 70), ("A", 40)]),
    ]);
    let w = World::with(|s| s.with_provider(script.clone()));
    let (b, cs) = w.executing(3, JudgingMode::AiJudge);
    for c in &cs {
        w.submit(&w.me, b.id, c.id, &format!("answer of {}", c.slot)).unwrap();
    }
    let ScoreOutcome::Scored(v) = run(w.service.score(&w.me, b.id)).unwrap() else { panic!("scored") };
    let asked = script.asked.lock().unwrap();
    assert_eq!(asked.len(), 3, "one retry, then the reverse order");
    let order =
        |r: &ChatRequest| parse_prompt(&r.user).unwrap().entries.iter().map(|e| e.0).collect::<String>();
    assert_eq!(
        (order(&asked[0]), order(&asked[1]), order(&asked[2])),
        ("ABC".into(), "ABC".into(), "CBA".into())
    );
    assert_eq!(asked[0].temperature, Some(0.0));
    let got: Vec<(u16, Option<bool>, VerdictKind)> =
        v.iter().map(|x| (x.score.tenths(), x.position_consistent, x.verdict)).collect();
    assert_eq!(
        got,
        vec![
            (600, Some(false), VerdictKind::Loser),
            (650, Some(false), VerdictKind::Winner),
            (250, Some(true), VerdictKind::Loser)
        ],
        "means of both orders; A was first in one order and second in the other"
    );
    assert!(v.iter().all(|x| x.model == "scripted-model"));
    assert!(v[0].reasoning.contains("rA"));
}

#[test]
fn a_judge_that_fails_twice_leaves_an_error_and_can_score_again() {
    let script = Scripted::new(vec![
        Ok("{\"verdicts\": []}".into()),
        Err(LfError::internal("connection refused")),
        answer(&[("A", 10), ("B", 90)]),
        answer(&[("B", 90), ("A", 10)]),
    ]);
    let w = World::with(|s| s.with_provider(script.clone()));
    let (b, cs) = w.executing(2, JudgingMode::AiJudge);
    for c in &cs {
        w.submit(&w.me, b.id, c.id, "text").unwrap();
    }
    let ScoreOutcome::Failed(err) = run(w.service.score(&w.me, b.id)).unwrap() else { panic!("failed") };
    assert_eq!(err.model, "scripted");
    assert!(err.message.contains("failed twice"), "{}", err.message);
    let view = run(w.service.score_view(&w.me, b.id)).unwrap();
    assert_eq!((view.battle.status, view.judge_errors.len(), view.verdicts.len()), (Scoring, 1, 0));
    let ScoreOutcome::Scored(v) = run(w.service.score(&w.me, b.id)).unwrap() else { panic!("scored") };
    assert_eq!(v[1].verdict, VerdictKind::Winner);
    assert_eq!(run(w.service.score_view(&w.me, b.id)).unwrap().verdicts, v, "verdicts show as they land");
    let (_, stranger) = lenser();
    assert_eq!(code(run(w.service.score(&stranger, b.id))), ErrorCode::Forbidden);
    w.status(b.id, Closed).unwrap();
    assert_eq!(code(run(w.service.score(&w.me, b.id))), ErrorCode::InvalidTransition);
}

#[test]
fn a_position_biased_judge_is_caught() {
    let w = World::with(|s| s.with_provider(Arc::new(FirstIsBest)));
    let (b, cs) = w.executing(2, JudgingMode::AiJudge);
    for c in &cs {
        w.submit(&w.me, b.id, c.id, "same quality").unwrap();
    }
    let ScoreOutcome::Scored(v) = run(w.service.score(&w.me, b.id)).unwrap() else { panic!() };
    assert!(v.iter().all(|x| x.position_consistent == Some(false)
        && x.verdict == VerdictKind::Tie
        && x.score.tenths() == 700));
}

#[test]
fn rubric_scores_are_weighted() {
    let w = World::new();
    let (b, cs) = w.executing(2, JudgingMode::RubricScore);
    w.submit(
        &w.me,
        b.id,
        cs[0].id,
        "Vivid autumn imagery: leaves falling in the quiet garden, five seven five syllables.",
    )
    .unwrap();
    w.submit(&w.me, b.id, cs[1].id, "no").unwrap();
    let ScoreOutcome::Scored(v) = run(w.service.score(&w.me, b.id)).unwrap() else { panic!() };
    let r = rubric();
    for x in &v {
        assert_eq!(x.criteria.len(), 2);
        assert_eq!(x.score, r.weighted(&x.criteria), "the score is the weighted mean of the criteria");
    }
    assert!(v[0].score > v[1].score);

    let script = Scripted::new(vec![
        Ok(r#"{"verdicts":[{"contender":"A","criteria":[{"criterion":1,"score":100},{"criterion":2,"score":0}],"reasoning":"a"},{"contender":"B","criteria":[{"criterion":1,"score":0},{"criterion":2,"score":100}],"reasoning":"b"}]}"#.into()),
        Ok(r#"{"verdicts":[{"contender":"B","criteria":[{"criterion":2,"score":100},{"criterion":1,"score":0}],"reasoning":"b"},{"contender":"A","criteria":[{"criterion":1,"score":100},{"criterion":2,"score":0}],"reasoning":"a"}]}"#.into()),
    ]);
    let w = World::with(|s| s.with_provider(script.clone()));
    let (b, cs) = w.executing(2, JudgingMode::RubricScore);
    for c in &cs {
        w.submit(&w.me, b.id, c.id, "x").unwrap();
    }
    let ScoreOutcome::Scored(v) = run(w.service.score(&w.me, b.id)).unwrap() else { panic!() };
    assert_eq!((v[0].score.tenths(), v[1].score.tenths()), (750, 250), "weights 3:1");
    assert!(script.asked.lock().unwrap()[0].user.contains("Imagery (weight 3): vivid autumn imagery"));
}

#[test]
fn auto_score_applies_its_check() {
    let w = World::new();
    let (b, cs) = w.executing(3, JudgingMode::AutoScore);
    w.submit(&w.me, b.id, cs[0].id, "no season here").unwrap();
    w.submit(&w.me, b.id, cs[1].id, "AUTUMN is here").unwrap();
    w.submit(&w.me, b.id, cs[2].id, "autumn again").unwrap();
    let ScoreOutcome::Scored(v) = run(w.service.score(&w.me, b.id)).unwrap() else { panic!() };
    let got: Vec<(u16, VerdictKind, Option<bool>)> =
        v.iter().map(|x| (x.score.tenths(), x.verdict, x.position_consistent)).collect();
    assert_eq!(
        got,
        vec![(0, VerdictKind::Loser, None), (1000, VerdictKind::Tie, None), (1000, VerdictKind::Tie, None)]
    );
    assert!(v.iter().all(|x| x.model == "auto_score:contains"));
    let closed = w.status(b.id, Closed).unwrap();
    assert_eq!(closed.winner, Some(cs[1].id), "equal scores: the earlier submission wins");
}

#[test]
fn only_the_service_records_foreign_verdicts() {
    let w = World::new();
    let (b, _) = w.executing(2, JudgingMode::AiJudge);
    assert_eq!(code(run(w.service.record_verdicts(&w.me, b.id, vec![]))), ErrorCode::PermissionDenied);
    assert_eq!(code(run(w.service.record_judge_error(&w.me, b.id, "m", "x"))), ErrorCode::PermissionDenied);
    let service = Principal::Service { acting_as: None };
    assert_eq!(
        code(run(w.service.record_judge_error(&service, b.id, "m", "x"))),
        ErrorCode::Conflict,
        "judge errors only while scoring"
    );
}

#[test]
fn history_and_leaderboard() {
    let w = World::new();
    let strong = ContenderRefId::new();
    let weak = ContenderRefId::new();
    let mut closed = Vec::new();
    for _ in 0..6 {
        let b = w.create(|n| n).unwrap();
        closed.push(b.id);
        let s = w.add_ref(b.id, ContenderType::AiModel, strong, None).unwrap();
        let k = w.add_ref(b.id, ContenderType::AiModel, weak, None).unwrap();
        w.status(b.id, Open).unwrap();
        w.status(b.id, Executing).unwrap();
        w.submit(
            &w.me,
            b.id,
            s.id,
            "Autumn leaves falling in the quiet garden, drifting, resting, gold and red.",
        )
        .unwrap();
        w.submit(&w.me, b.id, k.id, "ok").unwrap();
        run(w.service.score(&w.me, b.id)).unwrap();
        w.status(b.id, Closed).unwrap();
    }
    let board = run(w.service.leaderboard(&w.me, None, LeaderboardOptions::default())).unwrap();
    assert_eq!(board.battles, 6);
    let order: Vec<ContenderRefId> = board.ratings.iter().map(|r| r.reference.id).collect();
    assert_eq!(order, vec![strong, weak]);
    assert_eq!((board.ratings[0].wins, board.ratings[0].losses), (6, 0));
    let typed =
        run(w.service.leaderboard(&w.me, Some(BattleType::WorkflowBattle), LeaderboardOptions::default()))
            .unwrap();
    assert!(typed.ratings.is_empty());

    // Kept until the results change: asking again rates nothing.
    let rated = std::cell::Cell::new(0);
    let rate = async |results: Vec<lf_battle::BattleResult>, options| {
        rated.set(rated.get() + 1);
        Ok(lf_battle::rating::leaderboard(&results, options))
    };
    let again =
        run(w.service.leaderboard_with(&w.me, None, None, LeaderboardOptions::default(), rate)).unwrap();
    assert!(std::sync::Arc::ptr_eq(&again, &board) && rated.get() == 0, "the kept leaderboard");
    let other = LeaderboardOptions { min_battles: 1, ..LeaderboardOptions::default() };
    run(w.service.leaderboard_with(&w.me, None, None, other, rate)).unwrap();
    assert_eq!(rated.get(), 1, "other options: rated once");
    w.status(closed[0], Archived).unwrap();
    let fewer = run(w.service.leaderboard(&w.me, None, LeaderboardOptions::default())).unwrap();
    assert_eq!(fewer.battles, 5, "archiving a battle changes the leaderboard");

    let mine = run(w.service.history(&w.me, None, Some(Closed), PageRequest::default())).unwrap();
    assert_eq!(mine.total, 5, "six closed, one archived since");
    let nobody = Principal::Service { acting_as: None };
    assert_eq!(
        code(run(w.service.history(&nobody, None, None, PageRequest::default()))),
        ErrorCode::MissingLenser
    );
    let as_contender = LenserId::from_uuid(strong.as_uuid());
    let theirs = run(w.service.history(&nobody, Some(as_contender), None, PageRequest::default())).unwrap();
    assert_eq!(theirs.total, 6, "battles taken part in count too");
}

/// Keeps what it hears.
#[derive(Default)]
struct Heard(Mutex<Vec<lf_core::DomainEvent>>);

impl lf_core::EventSink for Heard {
    fn publish(&self, event: lf_core::DomainEvent) {
        self.0.lock().unwrap().push(event);
    }
}

#[test]
fn closing_a_battle_tells_its_events_once_with_the_winner() {
    let heard = Arc::new(Heard::default());
    let w = World::with(|s| s.with_events(heard.clone()));
    let (b, cs) = w.voting(2);
    let (_, voter) = lenser();
    run(w.service.cast_vote(&voter, b.id, VotePick::Contender(cs[1].id), None)).unwrap();
    w.status(b.id, Scoring).unwrap();
    assert!(heard.0.lock().unwrap().is_empty(), "only closing is an event");
    w.status(b.id, Closed).unwrap();
    w.status(b.id, Published).unwrap();
    let events = heard.0.lock().unwrap().clone();
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!((e.kind, e.owner, e.public), (lf_core::EventKind::BattleClosed, w.creator, true));
    let fields: std::collections::HashMap<_, _> = e.fields.iter().cloned().collect();
    assert_eq!(fields["battle_id"], b.id.to_string());
    assert_eq!(fields["winner"], "B");
    assert_eq!(fields["title"], "Haiku duel");
}

/// What a directory of lensers, AI Lensers, workflows and models holds,
/// each entry with the lenser who may see or enter it (and its owner).
#[derive(Default)]
struct Refs {
    lensers: Vec<LenserId>,
    /// (agent, owner, who may enter it)
    agents: Vec<(LenserId, LenserId, LenserId)>,
    /// (workflow, owner, who may read it)
    workflows: Vec<(lf_core::WorkflowId, LenserId, LenserId)>,
    /// (model, who may use it)
    models: Vec<(ContenderRefId, LenserId)>,
}

#[async_trait]
impl lf_battle::ContenderRefs for Refs {
    async fn lenser(&self, id: LenserId) -> LfResult<bool> {
        Ok(self.lensers.contains(&id))
    }
    async fn agent(&self, p: &Principal, id: LenserId) -> LfResult<Option<LenserId>> {
        Ok(self.agents.iter().find(|(a, _, who)| *a == id && p.lenser() == Some(*who)).map(|(_, o, _)| *o))
    }
    async fn workflow(&self, p: &Principal, id: lf_core::WorkflowId) -> LfResult<Option<LenserId>> {
        Ok(self.workflows.iter().find(|(w, _, who)| *w == id && p.lenser() == Some(*who)).map(|(_, o, _)| *o))
    }
    async fn model(&self, p: &Principal, reference: ContenderRefId) -> LfResult<bool> {
        Ok(self.models.iter().any(|(m, who)| *m == reference && p.lenser() == Some(*who)))
    }
}

#[test]
fn contender_references_are_checked_through_the_port() {
    use ContenderType::*;
    let (alice, me) = lenser();
    let (bob, _) = lenser();
    let (carol, agent, workflow, model) =
        (LenserId::new(), LenserId::new(), lf_core::WorkflowId::new(), ContenderRefId::new());
    let refs = Refs {
        lensers: vec![carol],
        agents: vec![(agent, bob, alice)],
        workflows: vec![(workflow, bob, alice)],
        models: vec![(model, alice)],
    };
    let service = BattleService::new(Arc::new(MemoryBattleStore::new())).with_contender_refs(Arc::new(refs));
    let battle = |t: BattleType| {
        let mut new =
            NewBattle::new(BattleTitle::parse("Refs").unwrap(), TaskPrompt::parse("Say hi.").unwrap());
        new.battle_type = Some(t);
        new.judging_mode = Some(JudgingMode::default_for(t));
        new.max_contenders = Some(MaxContenders::parse(26).unwrap());
        run(service.create(&me, new)).unwrap().id
    };
    let add = |b: BattleId, t: ContenderType, reference: ContenderRefId| {
        run(service.add_contender(
            &me,
            NewContender {
                battle_id: b,
                display_name: DisplayName::parse("Someone").unwrap(),
                contender_type: t,
                reference,
                slot: None,
                // Ignored with the port, which names the owner.
                owner: Some(LenserId::new()),
            },
        ))
    };
    let of = ContenderRefId::from_uuid;
    let lb = battle(BattleType::LenserBattle);
    let ai = battle(BattleType::AiVsAi);
    let wb = battle(BattleType::WorkflowBattle);
    let cases = [
        (lb, Human, of(carol.as_uuid()), Some(Some(carol))),
        (lb, Human, of(alice.as_uuid()), Some(Some(alice))),
        (lb, AiAgent, of(agent.as_uuid()), Some(Some(bob))),
        (ai, AiModel, model, Some(None)),
        (wb, Workflow, of(workflow.as_uuid()), Some(Some(bob))),
        (lb, Human, of(bob.as_uuid()), None),
        (battle(BattleType::LenserBattle), AiAgent, of(carol.as_uuid()), None),
        (ai, AiModel, of(agent.as_uuid()), None),
        (wb, Workflow, ContenderRefId::new(), None),
    ];
    for (b, t, reference, want) in cases {
        let before = run(service.get(&me, b)).unwrap().contenders.len();
        match (add(b, t, reference), want) {
            (Ok(c), Some(owner)) => assert_eq!(c.owner, owner, "{t} {reference:?}"),
            (Err(e), None) => {
                assert_eq!((e.code(), field(&e).as_deref()), (ErrorCode::NotFound, Some("contender_ref_id")));
                assert!(e.message().contains(&format!("{t} contender")), "names the type: {}", e.message());
                assert_eq!(run(service.get(&me, b)).unwrap().contenders.len(), before, "nothing saved");
            }
            (got, want) => panic!("{t} {reference:?}: got {got:?}, want {want:?}"),
        }
    }

    // Embedded alone, with no port, a reference is taken as given.
    let alone = World::new();
    let b = alone.create(|n| n).unwrap();
    alone.add(b.id, AiModel).expect("any reference without a port");
}

/// Results from elsewhere (an experiment's pairwise verdicts), as the
/// composition root gives them: a version and the results.
struct Elsewhere {
    version: std::sync::atomic::AtomicI64,
    results: Mutex<Vec<lf_battle::BattleResult>>,
}

#[async_trait]
impl lf_battle::MoreResults for Elsewhere {
    async fn version(&self) -> LfResult<i64> {
        Ok(self.version.load(std::sync::atomic::Ordering::SeqCst))
    }

    async fn results(&self, battle_type: Option<BattleType>) -> LfResult<Vec<lf_battle::BattleResult>> {
        let all = self.results.lock().unwrap().clone();
        Ok(all.into_iter().filter(|r| battle_type.is_none_or(|t| t == r.battle_type)).collect())
    }
}

#[test]
fn more_results_are_rated_with_the_battles_and_their_version_renews_the_board() {
    let (strong, weak) = (ContenderRefId::new(), ContenderRefId::new());
    let won = |tag: &str| {
        let entry = |id, rank| lf_battle::ResultEntry {
            reference: lf_battle::ContenderRef { kind: ContenderType::AiModel, id },
            display_name: "m".into(),
            rank,
            style: None,
        };
        lf_battle::BattleResult {
            battle_id: BattleId::new(),
            tags: vec![tag.to_owned()],
            battle_type: BattleType::AiVsAi,
            closed_at: Timestamp::from_micros(0),
            entries: vec![entry(strong, 1), entry(weak, 2)],
        }
    };
    let more =
        Arc::new(Elsewhere { version: 1.into(), results: Mutex::new(vec![won("code"), won("poetry")]) });
    let service = BattleService::new(Arc::new(MemoryBattleStore::new())).with_more_results(more.clone());
    let me = Principal::Service { acting_as: None };
    let options = LeaderboardOptions::new(Some(1), Some(0)).unwrap();
    let board = |category: Option<&str>, t: Option<BattleType>| {
        let rate = async |r: Vec<lf_battle::BattleResult>, o| Ok(lf_battle::rating::leaderboard(&r, o));
        run(service.leaderboard_with(&me, t, category, options, rate)).unwrap()
    };
    let all = board(None, None);
    assert_eq!((all.battles, all.ratings[0].reference.id, all.ratings[0].wins), (2, strong, 2));
    assert_eq!(board(Some("Code"), None).battles, 1, "a category filters them as it filters battles");
    assert!(board(None, Some(BattleType::HumanVsAi)).ratings.is_empty());
    // A new result with the same version: the kept board; a new version: rated again.
    more.results.lock().unwrap().push(won("code"));
    assert_eq!(board(None, None).battles, 2);
    more.version.store(2, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(board(None, None).battles, 3);
}
