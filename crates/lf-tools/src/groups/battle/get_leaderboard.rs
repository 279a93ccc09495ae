use lf_battle::rating::leaderboard;
use lf_battle::{BattleResult, Leaderboard, LeaderboardOptions};
use lf_core::{LfError, LfResult};
use schemars::JsonSchema;
use serde::Serialize;

use super::shapes::BattleTypeIn;
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct LeaderboardIn {
        /// Only battles of this format.
        pub battle_type: Option<BattleTypeIn>,
        /// Fewest battles before a rating is shown.
        #[schemars(range(min = 1, max = 10000), extend("default" = 5))]
        pub min_battles: Option<i64>,
        /// Only battles or cases with this tag.
        #[schemars(length(min = 1, max = 32))]
        pub category: Option<String>,
        /// Length and markdown as covariates (Arena style control).
        pub style_control: Option<bool>,
    }
}

#[derive(Serialize, JsonSchema)]
pub struct RatingOut {
    /// Place on the board, 1 first.
    pub rank: u64,
    pub contender_type: &'static str,
    pub contender_ref_id: String,
    /// Its label in its most recent closed battle.
    pub display_name: String,
    /// Bradley–Terry rating on the Elo scale (the mean of all contenders is 1000).
    pub rating: f64,
    /// Lower end of the 95% bootstrap interval (the board's order); null when it cannot be estimated (fewer than 2 battles, or every resample alike).
    pub lower: Option<f64>,
    /// Upper end of the 95% bootstrap interval; null with lower.
    pub upper: Option<f64>,
    /// Battles and pairwise cells it was in.
    pub battles: u32,
    /// Pairwise comparisons won, lost and tied (every pair ranked in a battle is one).
    pub wins: u32,
    pub losses: u32,
    pub ties: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value", extend("type" = "object"))]
    pub costs: Option<serde_json::Value>,
}

/// A contender with too few battles to be rated yet.
#[derive(Serialize, JsonSchema)]
pub struct UnratedOut {
    pub contender_type: &'static str,
    pub contender_ref_id: String,
    pub display_name: String,
    pub battles: u32,
    /// More closed battles it needs before it is rated.
    pub battles_needed: u32,
}

/// Most unrated contenders listed.
const UNRATED_SHOWN: usize = 20;

#[derive(Serialize, JsonSchema)]
pub struct LeaderboardOut {
    #[serde(flatten)]
    pub page: PageOut<RatingOut>,
    /// Battles and pairwise cells counted (two contenders or more).
    pub battles_counted: u32,
    /// Contenders fitted, shown or not.
    pub contenders_fitted: u32,
    /// Contenders left out for having fewer than min_battles battles.
    pub unrated: u32,
    /// The unrated contenders, fewest battles needed first (at most 20).
    pub unrated_contenders: Vec<UnratedOut>,
    pub min_battles: u32,
    pub bootstrap_rounds: u32,
    /// The category rated, or null for all.
    pub category: Option<String>,
    /// {on: false}, or {on: true, length_elo, markdown_elo, comparisons}:
    /// what a covariate of 1 (one answer all the length, or the markdown
    /// density, of the two) was worth, over the comparisons with both
    /// answers' styles.
    #[schemars(with = "serde_json::Value", extend("type" = "object"))]
    pub style_control: serde_json::Value,
}

/// Rates `results` off the async threads: rating a large history is long
/// CPU work (docs/performance.md) that would stall every other task on its
/// thread. The tool and the leaderboard page both rate through it.
pub async fn rate_battles(results: Vec<BattleResult>, options: LeaderboardOptions) -> LfResult<Leaderboard> {
    off_the_async_threads("rating the battles", move || leaderboard(&results, options)).await
}

/// Runs the CPU work `work` off the async threads (rating battles,
/// comparing experiments): on a multi-threaded runtime (lf-mcp-http) the
/// other tasks move to another worker while this one works in place, next
/// to what it just read; on a single-threaded one (lf-mcp-stdio) it works
/// on a blocking thread. `what` names it in the error of a panic.
pub async fn off_the_async_threads<T: Send + 'static>(
    what: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> LfResult<T> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if Handle::current().runtime_flavor() == RuntimeFlavor::MultiThread {
        return Ok(tokio::task::block_in_place(work));
    }
    tokio::task::spawn_blocking(work).await.map_err(|e| LfError::internal(format!("{what} failed: {e}")))
}

pub struct GetLeaderboard;

impl Tool for GetLeaderboard {
    const NAME: &'static str = "get_leaderboard";
    const TITLE: &'static str = "Get the leaderboard";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Bradley–Terry ratings (Elo scale, 95% intervals) over closed battles and shared experiments' pairwise verdicts, best lower bound first.";
    type Input = LeaderboardIn;
    type Output = LeaderboardOut;

    async fn call(ctx: Ctx, i: LeaderboardIn) -> LfResult<LeaderboardOut> {
        let page = i.page()?;
        let options = LeaderboardOptions {
            style_control: i.style_control.unwrap_or(false),
            ..LeaderboardOptions::new(i.min_battles, None)?
        };
        let board = ctx
            .services
            .battle
            .leaderboard_with(
                &ctx.principal,
                i.battle_type.map(Into::into),
                i.category.as_deref(),
                options,
                rate_battles,
            )
            .await?;
        // A contender whose answers a model made shows what they cost on
        // average (`costs`); others show no such field.
        let means = ctx.services.battle.cost_means(i.battle_type.map(Into::into)).await?;
        let costs_of = |r: &lf_battle::ContenderRef| {
            let m = means.iter().find(|m| m.reference == *r)?;
            Some(serde_json::json!({
                "answers": m.answers,
                "mean_cost_usd": m.mean_cost_usd,
                "mean_latency_ms": m.mean_total_ms.round(),
            }))
        };
        let total = board.ratings.len() as u64;
        let offset = page.offset();
        let round = |x: f64| (x * 10.0).round() / 10.0;
        let items: Vec<RatingOut> = board
            .ratings
            .iter()
            .enumerate()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(page.limit() as usize)
            .map(|(n, r)| RatingOut {
                rank: n as u64 + 1,
                contender_type: r.reference.kind.as_str(),
                contender_ref_id: r.reference.id.to_string(),
                display_name: r.display_name.clone(),
                rating: round(r.rating),
                lower: r.interval.map(|i| round(i.lower)),
                upper: r.interval.map(|i| round(i.upper)),
                battles: r.battles,
                wins: r.wins,
                losses: r.losses,
                ties: r.ties,
                costs: costs_of(&r.reference),
            })
            .collect();
        let page = lf_core::Page::new(items, total, page);
        Ok(LeaderboardOut {
            page: PageOut::from_page(page, |r| r),
            battles_counted: board.battles,
            contenders_fitted: board.contenders,
            unrated: board.unrated.len() as u32,
            unrated_contenders: board
                .unrated
                .iter()
                .take(UNRATED_SHOWN)
                .map(|u| UnratedOut {
                    contender_type: u.reference.kind.as_str(),
                    contender_ref_id: u.reference.id.to_string(),
                    display_name: u.display_name.clone(),
                    battles: u.battles,
                    battles_needed: u.battles_needed,
                })
                .collect(),
            min_battles: board.options.min_battles,
            bootstrap_rounds: board.options.rounds,
            category: i.category.as_deref().map(|c| lf_battle::category("category", c)).transpose()?,
            style_control: match board.style {
                Some(s) => serde_json::json!({
                    "on": true,
                    "length_elo": round(s.length),
                    "markdown_elo": round(s.markdown),
                    "comparisons": s.comparisons,
                }),
                None => serde_json::json!({"on": false}),
            },
        })
    }
}
