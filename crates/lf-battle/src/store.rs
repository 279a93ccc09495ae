//! The storage contract of battles. Implementations: [`crate::MemoryBattleStore`]
//! here, SQLite and PostgreSQL in lf-store. All of them run
//! [`crate::contract::suite`].

use async_trait::async_trait;
use lf_core::{BattleId, ContenderId, LenserId, LfResult, Page, PageRequest, Reach, SearchQuery, Timestamp};

use crate::model::{
    AnswerCostRecord, AnswerError, Battle, BattleFilter, BattleResult, BattleSheet, BattleStatus,
    BattleSummary, BattleType, Contender, CostMean, HistoryFilter, JudgeError, Standing, Submission, Verdict,
    Vote, VotePick,
};

/// What [`BattleStore::put_submission`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredSubmission {
    /// The submission as stored: on a replacement, the first submission's
    /// `id` and `created_at` with the new text, `submitted_by` and
    /// `updated_at`.
    pub submission: Submission,
    /// Whether an earlier submission was replaced.
    pub replaced: bool,
    /// The battle's status after the write (moved when it auto-advanced).
    pub status: BattleStatus,
}

/// What [`BattleStore::put_vote`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredVote {
    /// The vote as stored: on a replacement, the first vote's `id` and
    /// `created_at` with the new pick, rationale and `updated_at`.
    pub vote: Vote,
    /// Whether the voter's earlier vote was replaced.
    pub replaced: bool,
}

/// Where battles live.
///
/// Visibility is the store's job: reads take the caller's [`Reach`] and apply
/// it inside the query. With `Reach::Lenser(me)` a battle is readable unless
/// it is a draft created by someone else (see [`crate::state::visible`]);
/// `Reach::Everything` reads every battle. Battles are never deleted
/// (archiving is a status).
///
/// Writes that depend on what was read carry what the caller expects (the
/// status it saw, the slot it computed) and the store checks it in the same
/// transaction as the write: a SQL store does each write method in one
/// transaction (`BEGIN IMMEDIATE` on SQLite; on PostgreSQL a
/// `SELECT … FOR UPDATE` of the battle row, or a guarded `UPDATE … WHERE
/// status = $expected`), so two concurrent callers cannot both pass.
///
/// Errors every implementation MUST return (other failures are INTERNAL):
/// - NOT_FOUND where the battle does not exist or is out of the caller's
///   reach (the same error in both cases), and where a contender id is not
///   one of the battle's;
/// - CONFLICT where an id is already taken, where the battle's status is not
///   the one the write expects (someone moved it meanwhile), and where a
///   contender's slot or reference is already taken in its battle.
///
/// Orders: contenders by slot; submissions, verdicts and vote counts by their
/// contender's slot; judge errors and answer errors oldest first; standings
/// by position; lists newest first (`created_at` descending, then id descending).
#[async_trait]
pub trait BattleStore: Send + Sync {
    /// Stores a new battle as given (the service creates them in draft, with
    /// no contenders). CONFLICT if the id is taken.
    async fn create_battle(&self, battle: &Battle) -> LfResult<()>;

    /// The battle. NOT_FOUND if missing or out of reach.
    async fn get_battle(&self, reach: Reach, id: BattleId) -> LfResult<Battle>;

    /// Everything about the battle, read in one consistent snapshot (one
    /// read transaction): contenders, submissions, the vote tally (counts
    /// only: who voted for what is not part of a sheet), verdicts, judge
    /// errors and standings. NOT_FOUND if missing or out of reach.
    async fn get_sheet(&self, reach: Reach, id: BattleId) -> LfResult<BattleSheet>;

    /// Readable battles matching `filter`, newest first, each with its
    /// number of contenders and votes. Archived battles only when
    /// `filter.status` is `archived`. `total` counts every match.
    async fn list_battles(
        &self,
        reach: Reach,
        filter: &BattleFilter,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>>;

    /// Readable battles, archived ones left out, whose title or task prompt
    /// contains every word of `query` (letters compared case-insensitively;
    /// on SQLite only ASCII letters fold), newest first, each with its
    /// number of contenders and votes. `total` counts every match.
    async fn search_battles(
        &self,
        reach: Reach,
        query: &SearchQuery,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>>;

    /// Readable battles that `filter.lenser` created or has a contender in
    /// (a contender whose reference id is the lenser's id), any status
    /// (archived included) unless `filter.status` says, newest first. Each
    /// battle once, however many of its contenders match.
    async fn battle_history(
        &self,
        reach: Reach,
        filter: &HistoryFilter,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>>;

    /// Adds `contender` to its battle if the battle's status is still
    /// `expected_status` and it has exactly `contender.slot.index()`
    /// contenders (so the slot is the next free one: slots stay a prefix of
    /// A–Z). NOT_FOUND if the battle is missing; CONFLICT if its status
    /// moved, the slot or the contender's reference is taken in this battle
    /// (unique `(battle_id, slot)` and `(battle_id, reference)`), or the id
    /// is taken. `max_contenders` is checked by the caller: it never changes.
    async fn add_contender(&self, contender: &Contender, expected_status: BattleStatus) -> LfResult<()>;

    /// Moves the battle from `from` to `to` and sets `updated_at = at`, if it
    /// is still in `from` (`UPDATE … WHERE id = $1 AND status = $from`).
    /// NOT_FOUND if missing; CONFLICT if not in `from`. Closing goes through
    /// [`BattleStore::close_battle`] instead.
    async fn set_status(
        &self,
        id: BattleId,
        from: BattleStatus,
        to: BattleStatus,
        at: Timestamp,
    ) -> LfResult<()>;

    /// Battles in executing whose every contender has a submission (and
    /// that have one contender at least): those [`crate::rules::settles`]
    /// moves on, left where they are by a process that stopped between the
    /// write that completed the set and the move. Oldest first
    /// (`created_at`, then id), only those after `after` (the `created_at`
    /// and id of the last battle an earlier call answered) when given, at
    /// most `limit`. Takes no reach: it serves the service's own catch-up
    /// (no battle in executing is a draft). No error but INTERNAL.
    async fn answered_executing(
        &self,
        after: Option<(Timestamp, BattleId)>,
        limit: u32,
    ) -> LfResult<Vec<Battle>>;

    /// Inserts the submission of `(battle_id, contender_id)`, or replaces
    /// the text, `submitted_by` and `updated_at` of the existing one (keeping
    /// its id and `created_at`), if the battle is open or executing. Then, in
    /// the same transaction, if `advance_to` is given, the battle is
    /// executing and every contender of the battle now has a submission, the
    /// battle moves to `advance_to` (`updated_at = submission.updated_at`).
    /// With `cost` (a model made the answer), what it cost is recorded in
    /// the same transaction, for the submission as stored (its
    /// `updated_at`), replacing the contender's earlier cost as
    /// [`BattleStore::put_answer_cost`] does: both are written, or neither.
    /// NOT_FOUND if the battle is missing or the contender is not one of its;
    /// CONFLICT if the battle is in another status.
    async fn put_submission(
        &self,
        submission: &Submission,
        advance_to: Option<BattleStatus>,
        cost: Option<&lf_core::AnswerCost>,
    ) -> LfResult<StoredSubmission>;

    /// Inserts the vote of `(battle_id, voter)`, or replaces the pick,
    /// rationale and `updated_at` of the voter's existing vote (keeping its id
    /// and `created_at`), if the battle is voting. NOT_FOUND if the battle is
    /// missing or a picked contender is not one of its; CONFLICT if the
    /// battle is not voting.
    async fn put_vote(&self, vote: &Vote) -> LfResult<StoredVote>;

    /// What `voter` picked in the battle, `None` if they have not voted.
    /// NOT_FOUND if the battle is missing or out of `reach`.
    async fn vote_of(&self, reach: Reach, battle_id: BattleId, voter: LenserId)
    -> LfResult<Option<VotePick>>;

    /// Replaces all verdicts of the battle by `verdicts` (each of one of its
    /// contenders), if the battle is scoring; with `cost` (the AI judge's
    /// calls, its `contender_id` `None`), records it in the same
    /// transaction as [`BattleStore::put_answer_cost`] does. NOT_FOUND if
    /// missing or a contender is not one of its; CONFLICT if not scoring.
    async fn put_verdicts(
        &self,
        battle_id: BattleId,
        verdicts: &[Verdict],
        cost: Option<&AnswerCostRecord>,
    ) -> LfResult<()>;

    /// Appends a judge error, if the battle is scoring. NOT_FOUND if missing;
    /// CONFLICT if not scoring.
    async fn add_judge_error(&self, error: &JudgeError) -> LfResult<()>;

    /// Appends an answer error of one of the battle's contenders, in any
    /// status. NOT_FOUND if the battle is missing or the contender is not
    /// one of its.
    async fn add_answer_error(&self, error: &AnswerError) -> LfResult<()>;

    /// Records what a model's answer cost: that of contender
    /// `record.contender_id`'s submission, or (`None`) the AI judge's,
    /// replacing the one recorded for it before. Any status. NOT_FOUND if
    /// the battle is missing or the contender is not one of its.
    async fn put_answer_cost(&self, record: &AnswerCostRecord) -> LfResult<()>;

    /// The costs recorded in the battle that still stand: a contender's
    /// when recorded for its submission as it is (the record's `at` is the
    /// submission's `updated_at`), by slot, then the judge's. NOT_FOUND if
    /// missing or out of reach.
    async fn answer_costs(&self, reach: Reach, battle_id: BattleId) -> LfResult<Vec<AnswerCostRecord>>;

    /// Per contender reference, over closed or published battles (of
    /// `battle_type` when given): the mean cost and total latency of its
    /// answers whose cost was recorded for the submission that stands (the
    /// record's `at` is the submission's `updated_at`), in any order. Takes
    /// no reach, as [`closed_results`](Self::closed_results).
    async fn cost_means(&self, battle_type: Option<BattleType>) -> LfResult<Vec<CostMean>>;

    /// Closes the battle if it is still scoring: status closed, `winner`,
    /// `closed_at = updated_at = at`, and the standings (one per contender),
    /// all in one transaction. NOT_FOUND if missing; CONFLICT if not scoring.
    async fn close_battle(
        &self,
        id: BattleId,
        standings: &[Standing],
        winner: Option<ContenderId>,
        at: Timestamp,
    ) -> LfResult<()>;

    /// The results of every closed or published battle (of `battle_type`
    /// when given), each contender with its reference, display name and
    /// shared rank, in any order. Takes no reach: a battle with results was
    /// opened, so everyone can read it.
    async fn closed_results(&self, battle_type: Option<BattleType>) -> LfResult<Vec<BattleResult>>;

    /// A number that changes whenever [`closed_results`](Self::closed_results)
    /// may answer differently: a battle closed, was created closed or
    /// published, or was archived. While it stays the same, so do the
    /// results (and so a leaderboard computed from them).
    async fn results_version(&self) -> LfResult<i64>;
}

/// Results rated beside closed battles', from where lf-battle cannot look
/// (experiments' pairwise verdicts: lf-eval's `ExperimentRatings`), given
/// by [`crate::BattleService::with_more_results`]. Each result is rated as
/// a battle is, and must be one everyone may read, as closed battles are:
/// the leaderboard is the same for every caller.
#[async_trait]
pub trait MoreResults: Send + Sync {
    /// A number that changes whenever [`results`](Self::results) may
    /// answer differently (one small read: the leaderboard asks it on
    /// every call and rates again only when it or the battles' changed).
    async fn version(&self) -> LfResult<i64>;

    /// Every result (of `battle_type` when given), in any order.
    async fn results(&self, battle_type: Option<BattleType>) -> LfResult<Vec<BattleResult>>;
}
