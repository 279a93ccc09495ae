//! Battles: one task prompt, 2 to 26 contenders (AI models, agents,
//! workflows, people) in slots A–Z, their submissions, a lifecycle, judging
//! (community votes, an AI judge that sees every contender in both orders, a
//! weighted rubric, or a deterministic check) and Bradley–Terry ratings
//! across battles.
//!
//! lf-battle knows nothing about SQL, MCP or HTTP (it reads the judge's
//! JSON answers with serde_json), and needs no async runtime of its own: an
//! app can run the whole [`BattleService`] on the [`MemoryBattleStore`] with
//! any executor. Model calls go through [`lf_core::ModelProvider`], and
//! lf-battle ships none: a service given no provider judges with the judge's
//! own deterministic stand-in answers (a transparent heuristic, see
//! `stand_in.rs`) and records [`lf_core::OFFLINE_MODEL_NAME`] in every
//! verdict, so nobody mistakes them for a model's; give it a provider
//! (lf-model's OpenAI-compatible client, or your own) with
//! [`BattleService::with_provider`].
//!
//! ```
//! use std::sync::Arc;
//! use lf_core::{ContenderRefId, LenserId, Principal};
//! use lf_battle::{
//!     BattleService, BattleStatus, BattleTitle, ContenderType, DisplayName, MemoryBattleStore, NewBattle,
//!     NewContender, ScoreOutcome, SubmissionText, TaskPrompt,
//! };
//! use lf_core::OFFLINE_MODEL_NAME;
//!
//! let service = BattleService::new(Arc::new(MemoryBattleStore::new()));
//! let me = Principal::Service { acting_as: Some(LenserId::new()) };
//! use pollster::block_on as run;
//! let battle = run(service.create(&me, NewBattle::new(
//!     BattleTitle::parse("Explain ownership").unwrap(),
//!     TaskPrompt::parse("Explain Rust ownership and borrowing to a Python programmer.").unwrap(),
//! ))).unwrap();
//! let mut ids = Vec::new();
//! for name in ["Model one", "Model two"] {
//!     let c = run(service.add_contender(&me, NewContender {
//!         battle_id: battle.id,
//!         display_name: DisplayName::parse(name).unwrap(),
//!         contender_type: ContenderType::AiModel,
//!         reference: ContenderRefId::new(),
//!         slot: None,
//!         owner: None,
//!     })).unwrap();
//!     ids.push(c.id);
//! }
//! run(service.set_status(&me, battle.id, BattleStatus::Open, false)).unwrap();
//! run(service.set_status(&me, battle.id, BattleStatus::Executing, false)).unwrap();
//! let answers = [
//!     "Ownership: every value has one owner; borrowing lends references to a value, like Python names but checked at compile time.",
//!     "It is about memory.",
//! ];
//! for (id, text) in ids.iter().zip(answers) {
//!     run(service.submit(&me, battle.id, *id, SubmissionText::parse(text).unwrap())).unwrap();
//! }
//! // The last submission moved the battle to scoring by itself.
//! let ScoreOutcome::Scored(verdicts) = run(service.score(&me, battle.id)).unwrap() else { panic!() };
//! assert!(verdicts.iter().all(|v| v.model == OFFLINE_MODEL_NAME && v.position_consistent == Some(true)));
//! let closed = run(service.set_status(&me, battle.id, BattleStatus::Closed, true)).unwrap();
//! assert_eq!(closed.winner, Some(ids[0]));
//! ```
//!
//! Invariants:
//! - a battle only moves along the table of [`state`], by its creator or the
//!   service; a refused move changes nothing;
//! - the slots of a battle are always a prefix of A–Z;
//! - every read goes through the store with the caller's reach (a draft is
//!   its creator's alone);
//! - ratings are a pure function of the set of closed battles, not of their
//!   order.

mod answers;
mod asks;
pub mod checks;
pub mod contract;
pub mod cost;
pub mod guide;
pub mod judge;
mod judging;
mod memory;
mod model;
mod pipeline;
pub mod rating;
mod refs;
pub mod rules;
pub mod scoring;
mod service;
mod stand_in;
pub mod state;
mod store;
mod tags;

pub use answers::{Answer, AnswerRun, WorkflowAnswers};
pub use asks::{
    ASK_ATTEMPTS, AskRecord, AskStore, Claim, MemoryAskStore, ModelAnswers, decide, decide_lease,
};
pub use guide::JudgingState;
pub use memory::{MemoryBattleStore, battle_not_found, contender_not_found, status_moved};
pub use model::{
    AnswerCostRecord, AnswerError, AutoCheck, Battle, BattleFilter, BattleResult, BattleSheet, BattleStatus,
    BattleSummary, BattleTitle, BattleType, Contender, ContenderRef, ContenderType, ContenderVotes, CostMean,
    CriterionDescription, CriterionTitle, DisplayName, HistoryFilter, JudgeError, JudgingMode, MaxContenders,
    ModelKey, Rationale, ResultEntry, Rubric, RubricCriterion, Score, Slot, Standing, Style, Submission,
    SubmissionText, TaskPrompt, Verdict, VerdictKind, Vote, VotePick, VoteTally,
};
pub use pipeline::{BattleView, ScoreState, StatusChange, Submitted};
pub use rating::{Interval, Leaderboard, LeaderboardOptions, Rating, StyleEffect, Unrated};
pub use refs::ContenderRefs;
pub use scoring::JsonSchemaValidator;
pub use service::{
    BattleService, NewBattle, NewContender, ScoreOutcome, ScoreView, SubmitOutcome, VoteOutcome,
};
pub use store::{BattleStore, MoreResults, StoredSubmission, StoredVote};
pub use tags::{MAX_TAG_CHARS, MAX_TAGS, battle_tags, category};
