//! The Battle use cases. Each takes the caller's [`Principal`]; reads go
//! through the store with the caller's reach, writes check the rules of
//! [`crate::rules`] and [`crate::state`] on what was read, then write with the
//! status (and slot) they expect, so a concurrent change is a CONFLICT.
//!
//! Scoring is explicit here: when a battle reaches scoring with a judged
//! mode (by itself after the last submission, or by `set_status`), the
//! caller runs [`BattleService::score`]; the use cases of
//! [`crate::pipeline`] do it by themselves, in the background. Until
//! verdicts land, [`BattleService::score_view`] shows what there is, judge
//! errors included; a failed judging leaves the battle in scoring, and
//! `score` can run again.

use std::sync::{Arc, Mutex};

use lf_core::{
    BattleId, Clock, ContenderId, ContenderRefId, DomainEvent, ErrorCode, EventKind, EventSink, LenserId,
    LfError, LfResult, ModelProvider, ModelResolver, NoEvents, Page, PageRequest, Principal, Reach,
    SearchQuery, Spawner, SubmissionId, SystemClock, Timestamp, VoteId,
};

use crate::answers::WorkflowAnswers;
use crate::model::{
    AutoCheck, Battle, BattleFilter, BattleSheet, BattleStatus, BattleSummary, BattleTitle, BattleType,
    Contender, ContenderType, DisplayName, HistoryFilter, JudgeError, JudgingMode, MaxContenders, ModelKey,
    Rationale, Rubric, Slot, Standing, Submission, SubmissionText, TaskPrompt, Verdict, Vote, VotePick,
    VoteTally,
};
use crate::pipeline::InFlight;

use crate::refs::{self, ContenderRefs};
use crate::rules::{self, advance_target};
use crate::scoring::{self, JsonSchemaValidator};
use crate::stand_in::StandInJudge;
use crate::state::{self, Event, Facts, Lifecycle};
use crate::store::BattleStore;

mod board;
use board::Boards;

/// A new battle. Unset options take their defaults: `ai_vs_ai`; the judging
/// mode of [`JudgingMode::default_for`] the type; 2 contenders.
#[derive(Clone, Debug)]
pub struct NewBattle {
    /// The display name.
    pub title: BattleTitle,
    /// The task every contender answers.
    pub task_prompt: TaskPrompt,
    /// The format.
    pub battle_type: Option<BattleType>,
    /// How submissions are judged.
    pub judging_mode: Option<JudgingMode>,
    /// How many contenders it takes.
    pub max_contenders: Option<MaxContenders>,
    /// The judge's model (`ai_judge` and `rubric_score` only).
    pub ai_judge_model_key: Option<ModelKey>,
    /// The criteria (`rubric_score` only, and required there).
    pub rubric: Option<Rubric>,
    /// The check (`auto_score` only, and required there).
    pub auto_check: Option<AutoCheck>,
    /// Categories, as given ([`crate::battle_tags`] checks them).
    pub tags: Vec<String>,
}

impl NewBattle {
    /// A battle with every option at its default.
    pub fn new(title: BattleTitle, task_prompt: TaskPrompt) -> Self {
        Self {
            title,
            task_prompt,
            battle_type: None,
            judging_mode: None,
            max_contenders: None,
            ai_judge_model_key: None,
            rubric: None,
            auto_check: None,
            tags: Vec::new(),
        }
    }
}

/// A contender to add.
#[derive(Clone, Debug)]
pub struct NewContender {
    /// The battle.
    pub battle_id: BattleId,
    /// Its label.
    pub display_name: DisplayName,
    /// What it is.
    pub contender_type: ContenderType,
    /// What it stands for.
    pub reference: ContenderRefId,
    /// The slot asked for; must be the next free one. `None`: the next free one.
    pub slot: Option<Slot>,
    /// The lenser who answers for an agent or workflow contender, as the
    /// caller resolved it (ignored for humans, who answer for themselves,
    /// and with [`ContenderRefs`], which name it).
    pub owner: Option<LenserId>,
}

/// What a submission did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubmitOutcome {
    /// The submission as stored.
    pub submission: Submission,
    /// Whether it replaced an earlier one.
    pub replaced: bool,
    /// The battle's status afterwards.
    pub status: BattleStatus,
    /// Whether this submission was the last one and moved the battle on
    /// (to voting or scoring). When it moved to scoring with a judged mode,
    /// the caller runs [`BattleService::score`].
    pub advanced: bool,
}

/// What a vote did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VoteOutcome {
    /// The vote as stored.
    pub vote: Vote,
    /// Whether it replaced the voter's earlier vote.
    pub replaced: bool,
    /// The battle's vote aggregates afterwards.
    pub tally: VoteTally,
}

/// The score of a battle as it stands: votes, verdicts as they land, judge
/// errors, and the standings once closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoreView {
    /// The battle.
    pub battle: Battle,
    /// Its contenders, in slot order.
    pub contenders: Vec<Contender>,
    /// Vote aggregates.
    pub votes: VoteTally,
    /// Current verdicts.
    pub verdicts: Vec<Verdict>,
    /// Failed judging attempts, oldest first.
    pub judge_errors: Vec<JudgeError>,
    /// Final places (empty until closed).
    pub standings: Vec<Standing>,
}

/// What [`BattleService::score`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScoreOutcome {
    /// Verdicts were recorded.
    Scored(Vec<Verdict>),
    /// Judging failed; the error was recorded and the battle stays in scoring.
    Failed(JudgeError),
    /// A `community_vote` battle: the votes are the score; nothing to judge.
    NothingToJudge,
}

/// The Battle use cases over a [`BattleStore`].
pub struct BattleService {
    pub(crate) store: Arc<dyn BattleStore>,
    clock: Arc<dyn Clock>,
    pub(crate) provider: Arc<dyn ModelProvider>,
    pub(crate) json_schema: Option<Arc<dyn JsonSchemaValidator>>,
    boards: Mutex<Boards>,
    /// Where judging runs in the background (see [`crate::pipeline`]).
    spawner: Option<Arc<dyn Spawner>>,
    in_flight: InFlight,
    events: Arc<dyn EventSink>,
    answers: Option<Arc<dyn WorkflowAnswers>>,
    /// Who asks `ai_model` contenders' models (see [`crate::asks`]).
    model_answers: Option<Arc<dyn crate::ModelAnswers>>,
    refs: Option<Arc<dyn ContenderRefs>>,
    /// What `ai_judge_model_key` names (a model profile, an operator
    /// endpoint, a bare model on `default`); without it, a model name sent
    /// to `provider` as it is.
    pub(crate) resolver: Option<Arc<dyn ModelResolver>>,
    /// Results rated beside the battles' (see [`crate::MoreResults`]).
    more: Option<Arc<dyn crate::MoreResults>>,
}

impl BattleService {
    /// A service on `store` with the system clock, no JSON Schema
    /// validator, and no model: it judges with the judge's deterministic
    /// stand-in answers, recorded under [`lf_core::OFFLINE_MODEL_NAME`],
    /// until [`BattleService::with_provider`] gives it one.
    pub fn new(store: Arc<dyn BattleStore>) -> Self {
        Self {
            store,
            clock: Arc::new(SystemClock),
            provider: Arc::new(StandInJudge),
            json_schema: None,
            boards: Mutex::default(),
            spawner: None,
            in_flight: InFlight::default(),
            events: Arc::new(NoEvents),
            answers: None,
            model_answers: None,
            refs: None,
            resolver: None,
            more: None,
        }
    }

    /// Reads `ai_judge_model_key` through `resolver`: checked at creation
    /// for the creator, and asked where it says when judging.
    pub fn with_resolver(mut self, resolver: Arc<dyn ModelResolver>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// Tells `events` of each battle that closes (`battle.closed`, seen by
    /// everyone: battles are public).
    pub fn with_events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.events = events;
        self
    }

    /// Lets workflow contenders answer by themselves through `answers` (see
    /// [`crate::answers`]).
    pub fn with_workflow_answers(mut self, answers: Arc<dyn WorkflowAnswers>) -> Self {
        self.answers = Some(answers);
        self
    }

    /// Lets `ai_model` contenders answer by themselves through `answers`
    /// (see [`crate::asks`]).
    pub fn with_model_answers(mut self, answers: Arc<dyn crate::ModelAnswers>) -> Self {
        self.model_answers = Some(answers);
        self
    }

    /// Checks every contender's reference through `refs`, which also name
    /// who answers for an agent or workflow contender (see [`ContenderRefs`]).
    pub fn with_contender_refs(mut self, refs: Arc<dyn ContenderRefs>) -> Self {
        self.refs = Some(refs);
        self
    }

    /// Rates `more` results beside closed battles' on the leaderboard
    /// (experiments' pairwise verdicts; see [`crate::MoreResults`]).
    pub fn with_more_results(mut self, more: Arc<dyn crate::MoreResults>) -> Self {
        self.more = Some(more);
        self
    }

    /// Uses `clock` for every timestamp.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Judges with `provider`.
    pub fn with_provider(mut self, provider: Arc<dyn ModelProvider>) -> Self {
        self.provider = provider;
        self
    }

    /// Evaluates `json_schema` checks with `validator`.
    pub fn with_json_schema_validator(mut self, validator: Arc<dyn JsonSchemaValidator>) -> Self {
        self.json_schema = Some(validator);
        self
    }

    /// Judges in the background on `spawner` (see [`crate::pipeline`]);
    /// without one, the use cases that judge by themselves judge before
    /// they return.
    pub fn with_spawner(mut self, spawner: Arc<dyn Spawner>) -> Self {
        self.spawner = Some(spawner);
        self
    }

    /// The model provider judging battles (one answering stand-ins under
    /// [`lf_core::OFFLINE_MODEL_NAME`] unless it was given another).
    pub fn provider(&self) -> &Arc<dyn ModelProvider> {
        &self.provider
    }

    /// What names a model (a profile, an endpoint, a bare model name), when
    /// the composition root gave one ([`BattleService::with_resolver`]).
    pub fn resolver(&self) -> Option<&Arc<dyn ModelResolver>> {
        self.resolver.as_ref()
    }

    pub(crate) fn spawner(&self) -> Option<&Arc<dyn Spawner>> {
        self.spawner.as_ref()
    }

    pub(crate) fn in_flight(&self) -> &InFlight {
        &self.in_flight
    }

    pub(crate) fn workflow_answers(&self) -> Option<&Arc<dyn WorkflowAnswers>> {
        self.answers.as_ref()
    }

    pub(crate) fn model_answers(&self) -> Option<&Arc<dyn crate::ModelAnswers>> {
        self.model_answers.as_ref()
    }

    pub(crate) fn store(&self) -> &Arc<dyn BattleStore> {
        &self.store
    }

    pub(crate) fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Creates a draft battle owned by the caller (MISSING_LENSER for the
    /// service acting as nobody). INVALID_ARGUMENT, naming the field, when
    /// the options contradict each other: a rubric without `rubric_score` or
    /// `rubric_score` without one; the same for `auto_check` and
    /// `auto_score`; `ai_judge_model_key` for a mode that asks no model; a
    /// judging mode against the format (`human_vs_human_open_votes` is judged
    /// by votes, `human_vs_human_ai_votes` by an AI); a `json_schema` check
    /// that the configured validator refuses, or without a validator.
    pub async fn create(&self, p: &Principal, new: NewBattle) -> LfResult<Battle> {
        self.create_with_id(p, BattleId::new(), new).await
    }

    /// [`BattleService::create`] under a chosen id, for a caller that must
    /// be able to make the same battle twice and get one (a workflow step
    /// run again): CONFLICT when the id is taken, nothing written.
    pub async fn create_with_id(&self, p: &Principal, id: BattleId, new: NewBattle) -> LfResult<Battle> {
        let creator = p.owner_for_create()?;
        let battle_type = new.battle_type.unwrap_or(BattleType::AiVsAi);
        let mode = new.judging_mode.unwrap_or(JudgingMode::default_for(battle_type));
        match (battle_type, mode) {
            (BattleType::HumanVsHumanOpenVotes, m) if m != JudgingMode::CommunityVote => {
                return Err(LfError::invalid_argument(format!(
                    "A human_vs_human_open_votes battle is judged by community votes; drop judging_mode or set it to community_vote (got {m}), or pick another battle_type."
                ))
                .with_field("judging_mode"));
            }
            (BattleType::HumanVsHumanAiVotes, JudgingMode::CommunityVote) => {
                return Err(LfError::invalid_argument(
                    "A human_vs_human_ai_votes battle is judged by an AI; use judging_mode ai_judge, rubric_score or auto_score, or battle_type human_vs_human_open_votes for community votes.",
                )
                .with_field("judging_mode"));
            }
            _ => {}
        }
        match (mode, new.rubric.is_some()) {
            (JudgingMode::RubricScore, false) => {
                return Err(LfError::invalid_argument(
                    "judging_mode rubric_score needs a rubric: give 1 to 20 criteria, each with a title, a weight and a description.",
                )
                .with_field("rubric"));
            }
            (m, true) if m != JudgingMode::RubricScore => {
                return Err(LfError::invalid_argument(format!(
                    "rubric is only used with judging_mode rubric_score (this battle uses {m}); drop it or change judging_mode."
                ))
                .with_field("rubric"));
            }
            _ => {}
        }
        match (mode, &new.auto_check) {
            (JudgingMode::AutoScore, None) => {
                return Err(LfError::invalid_argument(
                    "judging_mode auto_score needs an auto_check: exact, contains, regex, json_schema or length_range.",
                )
                .with_field("auto_check"));
            }
            (m, Some(_)) if m != JudgingMode::AutoScore => {
                return Err(LfError::invalid_argument(format!(
                    "auto_check is only used with judging_mode auto_score (this battle uses {m}); drop it or change judging_mode."
                ))
                .with_field("auto_check"));
            }
            (_, Some(AutoCheck::JsonSchema { schema })) => match &self.json_schema {
                Some(v) => v.check_schema(schema)?,
                None => {
                    return Err(LfError::invalid_argument(
                        "This server has no JSON Schema validator configured, so json_schema checks are unavailable; use another auto_check kind.",
                    )
                    .with_field("auto_check.schema"));
                }
            },
            _ => {}
        }
        if new.ai_judge_model_key.is_some()
            && !matches!(mode, JudgingMode::AiJudge | JudgingMode::RubricScore)
        {
            return Err(LfError::invalid_argument(format!(
                "ai_judge_model_key is only used when a model judges (ai_judge or rubric_score); this battle uses {mode}. Drop it."
            ))
            .with_field("ai_judge_model_key"));
        }
        if let (Some(resolver), Some(key)) = (&self.resolver, &new.ai_judge_model_key) {
            resolver.resolve(p, "ai_judge_model_key", key.as_str()).await?;
        }
        let now = self.now();
        let battle = Battle {
            id,
            title: new.title,
            task_prompt: new.task_prompt,
            battle_type,
            judging_mode: mode,
            max_contenders: new.max_contenders.unwrap_or_default(),
            ai_judge_model_key: new.ai_judge_model_key,
            rubric: new.rubric,
            auto_check: new.auto_check,
            tags: crate::tags::battle_tags(new.tags)?,
            creator,
            agent: p.agent(),
            status: BattleStatus::Draft,
            winner: None,
            created_at: now,
            updated_at: now,
            closed_at: None,
        };
        self.store.create_battle(&battle).await?;
        Ok(battle)
    }

    /// The battle with its contenders, submissions, vote aggregates,
    /// verdicts, judge errors and standings. NOT_FOUND if out of reach.
    pub async fn get(&self, p: &Principal, id: BattleId) -> LfResult<BattleSheet> {
        self.store.get_sheet(p.reach(), id).await
    }

    /// Readable battles, newest first.
    pub async fn list(
        &self,
        p: &Principal,
        filter: &BattleFilter,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        self.store.list_battles(p.reach(), filter, page).await
    }

    /// Readable battles whose title or task prompt contains every word of
    /// `query`, newest first (archived ones left out).
    pub async fn search(
        &self,
        p: &Principal,
        query: &SearchQuery,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        self.store.search_battles(p.reach(), query, page).await
    }

    /// Battles `lenser` (default: the caller's lenser; MISSING_LENSER when
    /// there is none) created or took part in, that the caller can read.
    pub async fn history(
        &self,
        p: &Principal,
        lenser: Option<LenserId>,
        status: Option<BattleStatus>,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        let lenser = match lenser.or(p.lenser()) {
            Some(l) => l,
            None => return Err(LfError::missing_lenser().with_field("lenser_id")),
        };
        self.store.battle_history(p.reach(), &HistoryFilter { lenser, status }, page).await
    }

    /// Votes, verdicts, judge errors and standings of a readable battle.
    pub async fn score_view(&self, p: &Principal, id: BattleId) -> LfResult<ScoreView> {
        let s = self.store.get_sheet(p.reach(), id).await?;
        Ok(ScoreView {
            battle: s.battle,
            contenders: s.contenders,
            votes: s.votes,
            verdicts: s.verdicts,
            judge_errors: s.judge_errors,
            standings: s.standings,
        })
    }

    /// The sheet of a battle the caller may change: NOT_FOUND if out of
    /// reach, FORBIDDEN if readable but not the caller's.
    pub(crate) async fn sheet_for_write(
        &self,
        p: &Principal,
        id: BattleId,
        what: &str,
    ) -> LfResult<BattleSheet> {
        let sheet = self.store.get_sheet(p.reach(), id).await?;
        if !p.may_write(sheet.battle.creator) {
            return Err(LfError::forbidden(format!(
                "Only the battle's creator can {what}. Ask the creator, or create your own battle."
            ))
            .with_field("battle_id"));
        }
        Ok(sheet)
    }

    /// Adds a contender in the next free slot (see
    /// [`rules::next_slot`] for every refusal). Only the creator (or the
    /// service): FORBIDDEN otherwise. With [`ContenderRefs`], the
    /// reference must name what the type says, for the caller (NOT_FOUND
    /// naming the type otherwise, see [`ContenderRefs`]), and they name who
    /// answers for an agent or workflow.
    pub async fn add_contender(&self, p: &Principal, new: NewContender) -> LfResult<Contender> {
        let sheet = self.sheet_for_write(p, new.battle_id, "add contenders").await?;
        let slot =
            rules::next_slot(&sheet.battle, &sheet.contenders, new.contender_type, new.reference, new.slot)?;
        let owner = match &self.refs {
            Some(r) => refs::check(r.as_ref(), p, new.contender_type, new.reference).await?,
            None => new.owner,
        };
        let contender = Contender {
            id: ContenderId::new(),
            battle_id: new.battle_id,
            slot,
            display_name: new.display_name,
            contender_type: new.contender_type,
            reference: new.reference,
            owner: rules::contender_owner(new.contender_type, new.reference, owner),
            agent: p.agent(),
            joined_at: self.now(),
        };
        self.store.add_contender(&contender, sheet.battle.status).await?;
        Ok(contender)
    }

    /// Submits (or replaces) a contender's answer while the battle is open
    /// or executing. The battle's creator, the contender's owner or the
    /// agent itself may submit ([`rules::may_submit`]). When this makes every
    /// contender's answer present while executing, the battle moves on by
    /// itself ([`rules::advance_target`]).
    pub async fn submit(
        &self,
        p: &Principal,
        battle_id: BattleId,
        contender_id: ContenderId,
        text: SubmissionText,
    ) -> LfResult<SubmitOutcome> {
        self.submit_with_cost(p, battle_id, contender_id, text, None).await
    }

    /// [`BattleService::submit`] of an answer a model made, with what it
    /// cost (`cost`) recorded in the same write: the submission stands with
    /// its cost, or neither is written.
    pub async fn submit_with_cost(
        &self,
        p: &Principal,
        battle_id: BattleId,
        contender_id: ContenderId,
        text: SubmissionText,
        cost: Option<&lf_core::AnswerCost>,
    ) -> LfResult<SubmitOutcome> {
        let sheet = self.store.get_sheet(p.reach(), battle_id).await?;
        let contender = sheet
            .contender(contender_id)
            .ok_or_else(|| crate::memory::contender_not_found(battle_id, contender_id))?;
        rules::may_submit(&sheet.battle, contender, p)?;
        rules::check_submittable(&sheet.battle)?;
        let now = self.now();
        let submission = Submission {
            id: SubmissionId::new(),
            battle_id,
            contender_id,
            text,
            // An agent's answer is recorded as the agent's.
            submitted_by: p.actor(),
            created_at: now,
            updated_at: now,
        };
        let stored = self
            .store
            .put_submission(&submission, Some(advance_target(sheet.battle.judging_mode)), cost)
            .await?;
        Ok(SubmitOutcome {
            advanced: stored.status != sheet.battle.status,
            submission: stored.submission,
            replaced: stored.replaced,
            status: stored.status,
        })
    }

    /// Moves a battle ([`state::transition`] says who and where). Moving to
    /// closed records the standings and the winner; a judged battle needs
    /// verdicts before it closes (INVALID_TRANSITION otherwise: score it
    /// first). Moving to executing when every contender has submitted
    /// already moves it on by itself, as the last submission would have
    /// ([`rules::settles`]). Moving to scoring does not judge: run
    /// [`BattleService::score`].
    pub async fn set_status(
        &self,
        p: &Principal,
        id: BattleId,
        to: BattleStatus,
        confirm: bool,
    ) -> LfResult<Battle> {
        Ok(self.move_status(p, id, to, confirm).await?.0)
    }

    /// [`BattleService::set_status`], and whether the battle then moved on
    /// by itself.
    pub(crate) async fn move_status(
        &self,
        p: &Principal,
        id: BattleId,
        to: BattleStatus,
        confirm: bool,
    ) -> LfResult<(Battle, bool)> {
        let sheet = self.store.get_sheet(p.reach(), id).await?;
        let b = &sheet.battle;
        let lifecycle = Lifecycle {
            status: b.status,
            creator: b.creator,
            battle_type: b.battle_type,
            facts: Facts::of(sheet.contenders.iter().map(|c| c.contender_type), sheet.submissions.len()),
        };
        let to = state::transition(&lifecycle, Event { to, confirm }, p)?;
        let now = self.now();
        if to == BattleStatus::Closed {
            if b.judging_mode.is_judged() && sheet.verdicts.is_empty() {
                return Err(LfError::new(
                    ErrorCode::InvalidTransition,
                    format!(
                        "This {} battle has no verdicts yet, so it cannot close: score it first (get_battle_score shows any judge errors), or archive it.",
                        b.judging_mode
                    ),
                )
                .with_field("status"));
            }
            let standings =
                scoring::standings(b, &sheet.contenders, &sheet.submissions, &sheet.votes, &sheet.verdicts);
            let winner = standings.first().map(|s| s.contender_id);
            self.store.close_battle(id, &standings, winner, now).await?;
            let winner_slot = winner
                .and_then(|w| sheet.contenders.iter().find(|c| c.id == w))
                .map(|c| c.slot.to_string())
                .unwrap_or_default();
            self.events.publish(
                DomainEvent::new(EventKind::BattleClosed, b.creator, true)
                    .with("battle_id", id.to_string())
                    .with("title", b.title.as_str())
                    .with("winner", winner_slot),
            );
        } else {
            self.store.set_status(id, b.status, to, now).await?;
        }
        let advanced = to == BattleStatus::Executing && self.settle(id, now).await?.is_some();
        Ok((self.store.get_battle(p.reach(), id).await?, advanced))
    }

    /// Moves battle `id` on by itself if it is executing with every
    /// contender's answer in, read afresh: a submission that landed
    /// between the caller's read and its move to executing counts (it saw
    /// the battle open, so it did not move it). The move is the store's
    /// guarded one: a CONFLICT means someone moved the battle meanwhile
    /// (another server's last submission, an archive), which leaves nothing
    /// to do. Where this call moved it, if it did.
    pub(crate) async fn settle(&self, id: BattleId, at: Timestamp) -> LfResult<Option<BattleStatus>> {
        let sheet = self.store.get_sheet(Reach::Everything, id).await?;
        let Some(to) = rules::settles(&sheet.battle, &sheet.contenders, &sheet.submissions) else {
            return Ok(None);
        };
        match self.store.set_status(id, BattleStatus::Executing, to, at).await {
            Ok(()) => Ok(Some(to)),
            Err(e) if e.code() == ErrorCode::Conflict => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Casts (or replaces) the caller's vote while the battle is voting (see
    /// [`rules::check_vote`] for every refusal).
    pub async fn cast_vote(
        &self,
        p: &Principal,
        battle_id: BattleId,
        pick: VotePick,
        rationale: Option<Rationale>,
    ) -> LfResult<VoteOutcome> {
        let sheet = self.store.get_sheet(p.reach(), battle_id).await?;
        let voter = rules::check_vote(&sheet.battle, &sheet.contenders, &sheet.submissions, p, pick)?;
        let now = self.now();
        let vote =
            Vote { id: VoteId::new(), battle_id, voter, pick, rationale, created_at: now, updated_at: now };
        let stored = self.store.put_vote(&vote).await?;
        let tally = self.store.get_sheet(p.reach(), battle_id).await?.votes;
        Ok(VoteOutcome { vote: stored.vote, replaced: stored.replaced, tally })
    }

    /// What the caller's lenser picked in a readable battle, `None` when
    /// they have not voted or the caller has no lenser. NOT_FOUND if out
    /// of reach.
    pub async fn my_vote(&self, p: &Principal, battle_id: BattleId) -> LfResult<Option<VotePick>> {
        match p.lenser() {
            Some(voter) => self.store.vote_of(p.reach(), battle_id, voter).await,
            None => self.store.get_battle(p.reach(), battle_id).await.map(|_| None),
        }
    }
}

pub(crate) fn service_only(p: &Principal, action: &str) -> LfResult<()> {
    match p {
        Principal::Service { .. } => Ok(()),
        _ => Err(LfError::new(
            ErrorCode::PermissionDenied,
            format!("{action} is reserved to the server itself (stdio mode or its scoring pipeline)."),
        )),
    }
}
