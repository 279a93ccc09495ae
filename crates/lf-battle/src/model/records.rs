//! The records of a battle: the battle, its contenders, submissions and
//! votes, verdicts, standings and results, built of the values in
//! [`super`].

use super::*;

/// A battle: its settings and where it is in its lifecycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Battle {
    /// The id.
    pub id: BattleId,
    /// The display name.
    pub title: BattleTitle,
    /// The task every contender answers.
    pub task_prompt: TaskPrompt,
    /// The format.
    pub battle_type: BattleType,
    /// How submissions are judged.
    pub judging_mode: JudgingMode,
    /// How many contenders it takes.
    pub max_contenders: MaxContenders,
    /// The model the AI judge asks for; `None`: the provider's default.
    pub ai_judge_model_key: Option<ModelKey>,
    /// The criteria of a `rubric_score` battle (`None` for other modes).
    pub rubric: Option<Rubric>,
    /// The check of an `auto_score` battle (`None` for other modes).
    pub auto_check: Option<AutoCheck>,
    /// The categories it is filed under (get_leaderboard rates one):
    /// trimmed, lowercase, each once, at most [`crate::MAX_TAGS`].
    pub tags: Vec<String>,
    /// Who created it and alone (with the service) moves it.
    pub creator: LenserId,
    /// The AI Lenser that created it for `creator` (DESIGN §5: an agent is
    /// the actor of every row it writes); `None` when a person or the
    /// service did.
    pub agent: Option<LenserId>,
    /// Where it is in its lifecycle.
    pub status: BattleStatus,
    /// The contender ranked first at closing; `None` before.
    pub winner: Option<ContenderId>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When its status or settings last changed.
    pub updated_at: Timestamp,
    /// When it was closed; `None` before.
    pub closed_at: Option<Timestamp>,
}

/// What a contender stands for across battles: ratings are kept per reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContenderRef {
    /// The kind of thing.
    pub kind: ContenderType,
    /// Its id (a lenser, an AI Lenser, a model profile, a workflow).
    pub id: ContenderRefId,
}

/// One contender of one battle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contender {
    /// The id.
    pub id: ContenderId,
    /// The battle it belongs to.
    pub battle_id: BattleId,
    /// Its slot; slots of a battle are `A`, `B`, … in the order contenders joined.
    pub slot: Slot,
    /// Its label in this battle.
    pub display_name: DisplayName,
    /// What it is (also in `reference.kind`).
    pub contender_type: ContenderType,
    /// What it stands for.
    pub reference: ContenderRefId,
    /// The lenser who answers for it: a human contender's own lenser id, an
    /// agent's or workflow's owner when the caller knows it. May submit for it,
    /// may not vote for it. `None`: only the creator submits for it.
    pub owner: Option<LenserId>,
    /// The AI Lenser that added it for the battle's creator; `None` when a
    /// person or the service did.
    pub agent: Option<LenserId>,
    /// When it joined.
    pub joined_at: Timestamp,
}

impl Contender {
    /// The reference ratings are kept under.
    pub fn reference(&self) -> ContenderRef {
        ContenderRef { kind: self.contender_type, id: self.reference }
    }
}

/// A contender's answer. One per contender; a resubmission replaces the text
/// and keeps the id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submission {
    /// The id, kept across resubmissions.
    pub id: SubmissionId,
    /// The battle.
    pub battle_id: BattleId,
    /// The contender it answers for.
    pub contender_id: ContenderId,
    /// The answer.
    pub text: SubmissionText,
    /// The lenser who submitted it (`None`: the service acting for nobody).
    pub submitted_by: Option<LenserId>,
    /// When the first version was submitted.
    pub created_at: Timestamp,
    /// When the current text was submitted.
    pub updated_at: Timestamp,
}

/// What a vote picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VotePick {
    /// This contender did best.
    Contender(ContenderId),
    /// No contender did better than the others.
    Tie,
}

/// One voter's vote in one battle; a second vote by the same voter replaces
/// the first (keeping its id and `created_at`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vote {
    /// The id, kept when the vote is replaced.
    pub id: VoteId,
    /// The battle.
    pub battle_id: BattleId,
    /// Who voted: a lenser, or an agent by its own id.
    pub voter: LenserId,
    /// The pick.
    pub pick: VotePick,
    /// Why, if the voter said.
    pub rationale: Option<Rationale>,
    /// When the voter first voted in this battle.
    pub created_at: Timestamp,
    /// When the current pick was made.
    pub updated_at: Timestamp,
}

/// Votes for one contender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContenderVotes {
    /// The contender.
    pub contender_id: ContenderId,
    /// How many voters picked it.
    pub votes: u32,
}

/// The vote aggregates of a battle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VoteTally {
    /// One entry per contender, in slot order, zeros included.
    pub per_contender: Vec<ContenderVotes>,
    /// How many voters picked `tie`.
    pub ties: u32,
    /// How many voters voted.
    pub total: u32,
}

impl VoteTally {
    /// Counts `votes` for `contenders` (in slot order).
    pub fn count(contenders: &[Contender], votes: &[Vote]) -> Self {
        let mut per_contender: Vec<ContenderVotes> =
            contenders.iter().map(|c| ContenderVotes { contender_id: c.id, votes: 0 }).collect();
        let mut ties = 0;
        for v in votes {
            match v.pick {
                VotePick::Tie => ties += 1,
                VotePick::Contender(id) => {
                    if let Some(e) = per_contender.iter_mut().find(|e| e.contender_id == id) {
                        e.votes += 1;
                    }
                }
            }
        }
        Self { per_contender, ties, total: votes.len() as u32 }
    }

    /// Votes for `contender` (0 when unknown).
    pub fn votes_for(&self, contender: ContenderId) -> u32 {
        self.per_contender.iter().find(|e| e.contender_id == contender).map_or(0, |e| e.votes)
    }
}

lf_core::word_enum!(
    /// A judge's call on one contender.
    VerdictKind, "verdict", [
        /// Alone at the top.
        Winner = "winner",
        /// Shares the top score with another contender.
        Tie = "tie",
        /// Below the top.
        Loser = "loser",
    ]
);

/// A judge's verdict on one contender: the AI judge's (averaged over both
/// orders), the rubric's, or the automatic check's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The battle.
    pub battle_id: BattleId,
    /// The contender judged.
    pub contender_id: ContenderId,
    /// Its standing among the judged contenders.
    pub verdict: VerdictKind,
    /// 0–100: the mean of both orders (`rubric_score`: of the weighted
    /// criteria scores; `auto_score`: 100 pass, 0 fail).
    pub score: Score,
    /// `rubric_score` only: the score of each criterion in rubric order,
    /// averaged over both orders. Empty for other modes.
    pub criteria: Vec<Score>,
    /// Why, in the judge's words (both orders' reasons for an AI judge).
    pub reasoning: String,
    /// Who judged: the model that answered (the offline provider names
    /// itself), or `auto_score:<kind>` for an automatic check.
    pub model: String,
    /// AI judges: whether the contender got the same rank among the
    /// contenders in both orders. `None` for automatic checks, which cannot
    /// be swayed by order.
    pub position_consistent: Option<bool>,
    /// When it was recorded.
    pub created_at: Timestamp,
}

/// A failed attempt to judge a battle; the battle stays in scoring and can
/// be scored again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JudgeError {
    /// The battle.
    pub battle_id: BattleId,
    /// The provider or check that failed.
    pub model: String,
    /// What went wrong, safe to show to the battle's readers.
    pub message: String,
    /// When.
    pub at: Timestamp,
}

/// A workflow contender whose run did not give an answer: the run failed
/// or was cancelled, would not start, or its answer could not be submitted.
/// The contender can still be answered by hand (`submit`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerError {
    /// The battle.
    pub battle_id: BattleId,
    /// The contender.
    pub contender_id: ContenderId,
    /// The workflow run, when one ran (its logs say more).
    pub run_id: Option<String>,
    /// What went wrong, safe to show to the battle's readers.
    pub message: String,
    /// When.
    pub at: Timestamp,
}

/// A contender's final place, recorded at closing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Standing {
    /// The contender.
    pub contender_id: ContenderId,
    /// 1..=n, distinct, after the tie-breaks of [`crate::scoring::standings`];
    /// position 1 is the winner.
    pub position: u8,
    /// 1..=n, shared by contenders equal on the judging mode's primary key
    /// (competition ranking: 1, 1, 3). Ratings count equal ranks as a tie.
    pub rank: u8,
    /// The judged score (`None` for community votes, or for a contender
    /// without a verdict).
    pub score: Option<Score>,
    /// Votes received.
    pub votes: u32,
}

/// Everything about one battle, read consistently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BattleSheet {
    /// The battle.
    pub battle: Battle,
    /// Its contenders, in slot order.
    pub contenders: Vec<Contender>,
    /// Its submissions, in slot order of their contenders.
    pub submissions: Vec<Submission>,
    /// Its vote aggregates.
    pub votes: VoteTally,
    /// Its current verdicts, in slot order.
    pub verdicts: Vec<Verdict>,
    /// Failed judging attempts, oldest first.
    pub judge_errors: Vec<JudgeError>,
    /// Workflow contenders' runs that gave no answer, oldest first.
    pub answer_errors: Vec<AnswerError>,
    /// Final places, by position; empty until closed.
    pub standings: Vec<Standing>,
}

impl BattleSheet {
    /// The submission of `contender`, if any.
    pub fn submission_of(&self, contender: ContenderId) -> Option<&Submission> {
        self.submissions.iter().find(|s| s.contender_id == contender)
    }

    /// The last answer error of `contender`, if any.
    pub fn answer_error_of(&self, contender: ContenderId) -> Option<&AnswerError> {
        self.answer_errors.iter().rev().find(|e| e.contender_id == contender)
    }

    /// The contender `id`, if it belongs to this battle.
    pub fn contender(&self, id: ContenderId) -> Option<&Contender> {
        self.contenders.iter().find(|c| c.id == id)
    }
}

/// A battle as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BattleSummary {
    /// The battle.
    pub battle: Battle,
    /// How many contenders it has.
    pub contenders: u32,
    /// How many votes were cast.
    pub votes: u32,
}

/// Filters of `list_battles`. Archived battles are listed only when
/// `status` is `archived`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BattleFilter {
    /// Only this status.
    pub status: Option<BattleStatus>,
    /// Only this format.
    pub battle_type: Option<BattleType>,
    /// Only battles this lenser created.
    pub creator: Option<LenserId>,
}

/// Filters of `get_battle_history`: battles `lenser` created or took part in
/// (as a contender whose reference is the lenser's id), any status unless
/// `status` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryFilter {
    /// Whose history.
    pub lenser: LenserId,
    /// Only this status.
    pub status: Option<BattleStatus>,
}

/// One contender's place in a closed battle, as ratings read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultEntry {
    /// What it stood for.
    pub reference: ContenderRef,
    /// Its label in that battle.
    pub display_name: String,
    /// Its shared rank (see [`Standing::rank`]).
    pub rank: u8,
    /// Its answer's style, when it submitted one (what style control
    /// weighs; see [`crate::rating`]).
    pub style: Option<Style>,
}

/// An answer's style, as the leaderboard's style control weighs it: its
/// length in characters and its markdown marks (each `#`, `*`, `` ` `` and
/// `|`: headings, emphasis and lists, code, tables). Counted the same way
/// by every store (SQL counts characters with `length` and `replace`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    pub chars: u32,
    pub markdown: u32,
}

impl Style {
    /// The style of `text`.
    pub fn of(text: &str) -> Style {
        let (mut chars, mut markdown) = (0u32, 0u32);
        for c in text.chars() {
            chars = chars.saturating_add(1);
            markdown = markdown.saturating_add(u32::from(matches!(c, '#' | '*' | '`' | '|')));
        }
        Style { chars, markdown }
    }

    /// Markdown marks per character (0 for an empty answer).
    pub fn density(self) -> f64 {
        if self.chars == 0 { 0.0 } else { f64::from(self.markdown) / f64::from(self.chars) }
    }
}

/// The outcome of one closed battle, as ratings read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BattleResult {
    /// The battle.
    pub battle_id: BattleId,
    /// Its tags ([`Battle::tags`]).
    pub tags: Vec<String>,
    /// Its format.
    pub battle_type: BattleType,
    /// When it closed.
    pub closed_at: Timestamp,
    /// Its contenders' places, in any order.
    pub entries: Vec<ResultEntry>,
}

/// What a model's answer in a battle cost: a contender's submission made
/// by a model (an `ai_model` contender, an agent answering) or the AI
/// judge's verdicts.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerCostRecord {
    /// The battle.
    pub battle_id: BattleId,
    /// The contender whose submission it is; `None`: the AI judge's call
    /// (both orders, retries included) that gave the current verdicts.
    pub contender_id: Option<ContenderId>,
    /// The profile, endpoint, model, times, tokens and price.
    pub cost: lf_core::AnswerCost,
    /// The `updated_at` of the submission it belongs to (a later
    /// submission not made by a model leaves it behind), or when the
    /// verdicts were made.
    pub at: Timestamp,
}

/// A contender's mean cost across closed battles (beside its rating).
#[derive(Clone, Debug, PartialEq)]
pub struct CostMean {
    /// Who it is across battles.
    pub reference: ContenderRef,
    /// Its answers with a recorded cost, in closed or published battles.
    pub answers: u32,
    /// Their mean cost in US dollars.
    pub mean_cost_usd: f64,
    /// Their mean total latency in milliseconds.
    pub mean_total_ms: f64,
}
