//! The Battle tools: the spec's eight (list_battles, get_battle,
//! get_battle_score, get_battle_history, create_battle, add_battle_contender,
//! submit_battle_run, set_battle_status) and cast_battle_vote and
//! get_leaderboard, over [`lf_battle::BattleService`]. Judging in the
//! background, who may have a battle judged again, what readers see of an
//! automatic check and the `next_step` prose are lf-battle's
//! (`lf_battle::pipeline`, `lf_battle::guide`); these files adapt arguments
//! and results.

mod shapes;

mod add_battle_contender;
mod cast_battle_vote;
mod create_battle;
mod get_battle;
mod get_battle_history;
mod get_battle_score;
mod get_leaderboard;
mod list_battles;
mod set_battle_status;
mod submit_battle_run;

pub use get_leaderboard::{off_the_async_threads, rate_battles};
pub(crate) use submit_battle_run::submit_answered;

use crate::catalog::group::Group;
use crate::catalog::tool::declare;

pub static GROUP: Group = Group {
    id: "battle",
    title: "Battle",
    description: "Battles between models, agents, workflows and people: create, answer, vote, judge and rate.",
    by_default: true,
    tools: |g| {
        vec![
            declare::<list_battles::ListBattles>(g),
            declare::<get_battle::GetBattle>(g),
            declare::<get_battle_score::GetBattleScore>(g),
            declare::<get_battle_history::GetBattleHistory>(g),
            declare::<create_battle::CreateBattle>(g),
            declare::<add_battle_contender::AddBattleContender>(g),
            declare::<submit_battle_run::SubmitBattleRun>(g),
            declare::<set_battle_status::SetBattleStatus>(g),
            declare::<cast_battle_vote::CastBattleVote>(g),
            declare::<get_leaderboard::GetLeaderboard>(g),
        ]
    },
};
