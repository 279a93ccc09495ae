//! What a reader of a battle is told besides its rows: where its judging
//! stands, whether its automatic check is shown, and what can happen next
//! (the `next_step` prose a model driving the tools follows). Pure
//! functions of the battle and of whether this process is judging it now.

use lf_core::Principal;

use crate::model::{Battle, BattleStatus, BattleType, Contender, ContenderType, JudgeError, Verdict};

/// Where the judging of a battle stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JudgingState {
    /// A community_vote battle: the votes are the score.
    Votes,
    /// This process is judging it now.
    Running,
    /// Verdicts are recorded.
    Judged,
    /// The last judging failed and left no verdicts (see the judge errors).
    Failed,
    /// Not judged yet.
    Pending,
}

impl JudgingState {
    /// The state of `battle` with these verdicts and errors; `running` when
    /// this process is judging it now.
    pub fn of(battle: &Battle, verdicts: &[Verdict], errors: &[JudgeError], running: bool) -> Self {
        if !battle.judging_mode.is_judged() {
            Self::Votes
        } else if running {
            Self::Running
        } else if !verdicts.is_empty() {
            Self::Judged
        } else if !errors.is_empty() {
            Self::Failed
        } else {
            Self::Pending
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Votes => "votes",
            Self::Running => "running",
            Self::Judged => "judged",
            Self::Failed => "failed",
            Self::Pending => "pending",
        }
    }
}

/// Whether `p` sees the parameters of `battle`'s automatic check (the
/// expected answer, the pattern…): its creator always, everyone else once
/// the battle is finished, so nobody tunes an answer to the check.
pub fn check_revealed(battle: &Battle, p: &Principal) -> bool {
    let finished =
        matches!(battle.status, BattleStatus::Closed | BattleStatus::Published | BattleStatus::Archived);
    finished || p.may_write(battle.creator)
}

/// What can happen next to `battle` (with `contenders` and its judging in
/// `judging`), in the words of the tools that do it.
pub fn next_step(battle: &Battle, contenders: &[Contender], judging: JudgingState) -> String {
    use BattleStatus::*;
    let judged = battle.judging_mode.is_judged();
    let (all, contenders) = (contenders, contenders.len());
    match battle.status {
        Draft | Open if contenders < 2 => format!(
            "Add contenders with add_battle_contender (it has {contenders} of at most {}).",
            battle.max_contenders.get()
        ),
        Draft => "Open it with set_battle_status status open, or add more contenders.".to_owned(),
        Open => "Move it to executing (contenders submit with submit_battle_run) or voting with set_battle_status.".to_owned(),
        Executing => executing(battle, all, judged),
        Voting => "Cast votes with cast_battle_vote, then move it to scoring with set_battle_status.".to_owned(),
        Scoring if judging == JudgingState::Running => {
            "Being judged in the background: read the verdicts with get_battle_score, then close it.".to_owned()
        }
        Scoring if judging == JudgingState::Failed => {
            "Judging failed (see judge_errors): call set_battle_status with status scoring to judge it again.".to_owned()
        }
        Scoring if judging == JudgingState::Pending => {
            "Not judged yet: call set_battle_status with status scoring to judge it.".to_owned()
        }
        Scoring => "Close it with set_battle_status status closed and confirm true: that records the winner and every rank.".to_owned(),
        Closed => "Closed: publish it with set_battle_status status published; ratings are on get_leaderboard.".to_owned(),
        Published => "Published. Ratings are on get_leaderboard.".to_owned(),
        Archived => "Archived: nothing leaves archived.".to_owned(),
    }
}

/// What happens while `battle` executes: who answers by themselves (its
/// ai_model contenders, its workflow contenders in a workflow battle), and
/// whose answers the caller submits.
fn executing(battle: &Battle, contenders: &[Contender], judged: bool) -> String {
    let to = if judged { "scoring, and judging starts" } else { "voting" };
    let has = |t: ContenderType| contenders.iter().any(|c| c.contender_type == t);
    let models = has(ContenderType::AiModel);
    let workflows = battle.battle_type == BattleType::WorkflowBattle && has(ContenderType::Workflow);
    if !models && !workflows {
        return format!(
            "Submit every contender's answer with submit_battle_run; the last one moves it to {to} by itself."
        );
    }
    let mut said = Vec::new();
    if models {
        said.push("Its ai_model contenders answer by themselves: each model is asked on the runner and its answer submitted with what it cost.".to_owned());
    }
    if workflows {
        said.push(
            "Its workflow contenders are running their workflows and submit their answers by themselves."
                .to_owned(),
        );
    }
    said.push("One that gives no answer shows an answer_error on its contender: submit for it with submit_battle_run.".to_owned());
    let others: Vec<String> = contenders
        .iter()
        .filter(|c| match c.contender_type {
            ContenderType::AiModel => false,
            ContenderType::Workflow => !workflows,
            _ => true,
        })
        .map(|c| c.slot.to_string())
        .collect();
    if !others.is_empty() {
        said.push(format!(
            "Submit the answers of the others ({}) with submit_battle_run (an AI Lenser answers for itself with run_agent_action answer_battle).",
            others.join(", ")
        ));
    }
    said.push(format!("The last answer moves it to {to} by itself."));
    said.join(" ")
}
