//! The leaderboard of a [`BattleService`]: Bradley–Terry ratings over closed
//! battles' results and the [`crate::MoreResults`] beside them, kept per
//! question until either's version changes.

use std::sync::Arc;

use lf_core::{LfResult, Principal};

use super::BattleService;
use crate::model::{BattleResult, BattleType};
use crate::rating::{Leaderboard, LeaderboardOptions, leaderboard};

/// Leaderboards computed from the results of one
/// [`crate::BattleStore::results_version`], by what they were asked for.
#[derive(Default)]
pub(super) struct Boards {
    version: Option<Versions>,
    kept: Vec<(BoardKey, Arc<Leaderboard>)>,
}

/// The battles' results version, and the more results' (0 without them).
type Versions = (i64, i64);

/// What a kept leaderboard was asked for: a battle type, a category, options.
type BoardKey = (Option<BattleType>, Option<String>, LeaderboardOptions);

/// Most leaderboards kept (one per battle type and option set asked for).
const KEPT_BOARDS: usize = 16;

impl BattleService {
    /// Bradley–Terry ratings over every closed or published battle (of one
    /// type, and tagged `category`, when given); see [`crate::rating`].
    pub async fn leaderboard(
        &self,
        p: &Principal,
        battle_type: Option<BattleType>,
        options: LeaderboardOptions,
    ) -> LfResult<Arc<Leaderboard>> {
        self.leaderboard_with(p, battle_type, None, options, async |results, options| {
            Ok(leaderboard(&results, options))
        })
        .await
    }

    /// [`leaderboard`](Self::leaderboard), computed by `rate` when no
    /// leaderboard is kept for the current results: rating many battles is
    /// CPU work a server runs off its async threads. A leaderboard is kept
    /// until a battle closes, is created closed, or is archived
    /// ([`BattleStore::results_version`] changes), or the more results
    /// change ([`crate::MoreResults::version`]), so asking again costs two
    /// small reads. The more results (of `battle_type`) are rated with the
    /// battles', filtered by category alike.
    pub async fn leaderboard_with(
        &self,
        _p: &Principal,
        battle_type: Option<BattleType>,
        category: Option<&str>,
        options: LeaderboardOptions,
        rate: impl AsyncFnOnce(Vec<BattleResult>, LeaderboardOptions) -> LfResult<Leaderboard>,
    ) -> LfResult<Arc<Leaderboard>> {
        let category = category.map(|c| crate::tags::category("category", c)).transpose()?;
        let more_version = match &self.more {
            Some(m) => m.version().await?,
            None => 0,
        };
        let version = (self.store.results_version().await?, more_version);
        if let Some(board) = self.kept_board(version, battle_type, category.as_deref(), options) {
            return Ok(board);
        }
        let mut results = self.store.closed_results(battle_type).await?;
        if let Some(m) = &self.more {
            results.extend(m.results(battle_type).await?);
        }
        if let Some(c) = &category {
            results.retain(|r| r.tags.contains(c));
        }
        let board = Arc::new(rate(results, options).await?);
        // Kept under the version read before the results: if a battle closed
        // in between, the next call sees a newer version and rates again.
        let mut boards = self.boards.lock().unwrap_or_else(|e| e.into_inner());
        if boards.version != Some(version) {
            *boards = Boards { version: Some(version), kept: Vec::new() };
        }
        if boards.kept.len() == KEPT_BOARDS {
            boards.kept.remove(0);
        }
        boards.kept.push(((battle_type, category, options), board.clone()));
        Ok(board)
    }

    fn kept_board(
        &self,
        version: Versions,
        battle_type: Option<BattleType>,
        category: Option<&str>,
        options: LeaderboardOptions,
    ) -> Option<Arc<Leaderboard>> {
        let boards = self.boards.lock().unwrap_or_else(|e| e.into_inner());
        if boards.version != Some(version) {
            return None;
        }
        boards
            .kept
            .iter()
            .find(|((t, c, o), _)| *t == battle_type && c.as_deref() == category && *o == options)
            .map(|(_, b)| b.clone())
    }
}
