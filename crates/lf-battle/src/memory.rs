//! An in-memory [`BattleStore`]: for tests, examples and apps that embed
//! lf-battle without a database. Same contract as the SQL stores; one lock
//! makes every method atomic.

use std::collections::HashMap;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use async_trait::async_trait;
use lf_core::{
    BattleId, ContenderId, LenserId, LfError, LfResult, Page, PageRequest, Reach, SearchQuery, Timestamp,
};

use crate::model::{
    AnswerCostRecord, AnswerError, Battle, BattleFilter, BattleResult, BattleSheet, BattleStatus,
    BattleSummary, BattleType, Contender, CostMean, HistoryFilter, JudgeError, ResultEntry, Standing, Style,
    Submission, Verdict, Vote, VotePick, VoteTally,
};
use crate::state::visible;
use crate::store::{BattleStore, StoredSubmission, StoredVote};

struct Row {
    battle: Battle,
    contenders: Vec<Contender>,
    submissions: Vec<Submission>,
    votes: Vec<Vote>,
    verdicts: Vec<Verdict>,
    judge_errors: Vec<JudgeError>,
    answer_errors: Vec<AnswerError>,
    standings: Vec<Standing>,
    costs: Vec<AnswerCostRecord>,
}

impl Row {
    fn readable(&self, reach: Reach) -> bool {
        visible(self.battle.status, self.battle.creator, reach)
    }

    fn slot_of(&self, id: ContenderId) -> usize {
        self.contenders.iter().find(|c| c.id == id).map_or(usize::MAX, |c| c.slot.index())
    }

    fn summary(&self) -> BattleSummary {
        BattleSummary {
            battle: self.battle.clone(),
            contenders: self.contenders.len() as u32,
            votes: self.votes.len() as u32,
        }
    }

    fn expect(&self, accepted: &[BattleStatus]) -> LfResult<()> {
        if accepted.contains(&self.battle.status) {
            Ok(())
        } else {
            Err(status_moved(self.battle.id, self.battle.status))
        }
    }
}

/// A [`BattleStore`] kept in process memory.
#[derive(Default)]
pub struct MemoryBattleStore {
    inner: RwLock<HashMap<BattleId, Row>>,
    /// [`BattleStore::results_version`], changed under the write lock.
    version: std::sync::atomic::AtomicI64,
}

impl MemoryBattleStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn bump(&self) {
        self.version.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn read(&self) -> RwLockReadGuard<'_, HashMap<BattleId, Row>> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }
    fn write(&self) -> RwLockWriteGuard<'_, HashMap<BattleId, Row>> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }
}

/// The NOT_FOUND of a battle, shared by every store.
pub fn battle_not_found(id: BattleId) -> LfError {
    LfError::not_found("Battle", id).with_field("battle_id")
}

/// The NOT_FOUND of a contender that is not one of a battle's, shared by
/// every store.
pub fn contender_not_found(battle: BattleId, id: ContenderId) -> LfError {
    LfError::not_found(&format!("Contender of battle {battle}:"), id).with_field("contender_id")
}

/// The CONFLICT of a write that found the battle in another status than it
/// expected, shared by every store.
pub fn status_moved(id: BattleId, now: BattleStatus) -> LfError {
    LfError::conflict(format!(
        "battle {id} changed while you were acting on it (it is now {now}). Read it again with get_battle and retry."
    ))
}

fn page_of(mut items: Vec<BattleSummary>, page: PageRequest) -> Page<BattleSummary> {
    items.sort_by(|a, b| b.battle.created_at.cmp(&a.battle.created_at).then(b.battle.id.cmp(&a.battle.id)));
    let total = items.len() as u64;
    let start = (page.offset() as usize).min(items.len());
    let end = (start + page.limit() as usize).min(items.len());
    Page::new(items.drain(start..end).collect(), total, page)
}

#[async_trait]
impl BattleStore for MemoryBattleStore {
    async fn create_battle(&self, battle: &Battle) -> LfResult<()> {
        let mut all = self.write();
        if all.contains_key(&battle.id) {
            return Err(LfError::conflict(format!("battle {} already exists", battle.id)));
        }
        if battle.status.has_results() {
            self.bump();
        }
        all.insert(
            battle.id,
            Row {
                battle: battle.clone(),
                contenders: Vec::new(),
                submissions: Vec::new(),
                votes: Vec::new(),
                verdicts: Vec::new(),
                judge_errors: Vec::new(),
                answer_errors: Vec::new(),
                standings: Vec::new(),
                costs: Vec::new(),
            },
        );
        Ok(())
    }

    async fn get_battle(&self, reach: Reach, id: BattleId) -> LfResult<Battle> {
        match self.read().get(&id) {
            Some(row) if row.readable(reach) => Ok(row.battle.clone()),
            _ => Err(battle_not_found(id)),
        }
    }

    async fn get_sheet(&self, reach: Reach, id: BattleId) -> LfResult<BattleSheet> {
        let all = self.read();
        let row = all.get(&id).filter(|r| r.readable(reach)).ok_or_else(|| battle_not_found(id))?;
        let mut submissions = row.submissions.clone();
        submissions.sort_by_key(|s| row.slot_of(s.contender_id));
        let mut verdicts = row.verdicts.clone();
        verdicts.sort_by_key(|v| row.slot_of(v.contender_id));
        let mut standings = row.standings.clone();
        standings.sort_by_key(|s| s.position);
        Ok(BattleSheet {
            battle: row.battle.clone(),
            contenders: row.contenders.clone(),
            submissions,
            votes: VoteTally::count(&row.contenders, &row.votes),
            verdicts,
            judge_errors: row.judge_errors.clone(),
            answer_errors: row.answer_errors.clone(),
            standings,
        })
    }

    async fn list_battles(
        &self,
        reach: Reach,
        filter: &BattleFilter,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        let all = self.read();
        let hits = all
            .values()
            .filter(|r| r.readable(reach))
            .filter(|r| match filter.status {
                Some(s) => r.battle.status == s,
                None => r.battle.status != BattleStatus::Archived,
            })
            .filter(|r| filter.battle_type.is_none_or(|t| r.battle.battle_type == t))
            .filter(|r| filter.creator.is_none_or(|c| r.battle.creator == c))
            .map(Row::summary)
            .collect();
        Ok(page_of(hits, page))
    }

    async fn search_battles(
        &self,
        reach: Reach,
        query: &SearchQuery,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        let all = self.read();
        let hits = all
            .values()
            .filter(|r| r.readable(reach) && r.battle.status != BattleStatus::Archived)
            .filter(|r| {
                let title = r.battle.title.as_str().to_lowercase();
                let task = r.battle.task_prompt.as_str().to_lowercase();
                query.terms().iter().all(|t| title.contains(t.as_str()) || task.contains(t.as_str()))
            })
            .map(Row::summary)
            .collect();
        Ok(page_of(hits, page))
    }

    async fn battle_history(
        &self,
        reach: Reach,
        filter: &HistoryFilter,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        let all = self.read();
        let me = filter.lenser.as_uuid();
        let hits = all
            .values()
            .filter(|r| r.readable(reach))
            .filter(|r| filter.status.is_none_or(|s| r.battle.status == s))
            .filter(|r| {
                r.battle.creator == filter.lenser || r.contenders.iter().any(|c| c.reference.as_uuid() == me)
            })
            .map(Row::summary)
            .collect();
        Ok(page_of(hits, page))
    }

    async fn add_contender(&self, contender: &Contender, expected_status: BattleStatus) -> LfResult<()> {
        let mut all = self.write();
        if all.values().any(|r| r.contenders.iter().any(|c| c.id == contender.id)) {
            return Err(LfError::conflict(format!("contender {} already exists", contender.id)));
        }
        let row = all.get_mut(&contender.battle_id).ok_or_else(|| battle_not_found(contender.battle_id))?;
        row.expect(&[expected_status])?;
        if row.contenders.len() != contender.slot.index()
            || row.contenders.iter().any(|c| c.reference == contender.reference)
        {
            return Err(LfError::conflict(format!(
                "slot {} or this contender reference was taken in battle {} meanwhile. Read the battle again and retry.",
                contender.slot, contender.battle_id
            )));
        }
        row.contenders.push(contender.clone());
        Ok(())
    }

    async fn set_status(
        &self,
        id: BattleId,
        from: BattleStatus,
        to: BattleStatus,
        at: Timestamp,
    ) -> LfResult<()> {
        let mut all = self.write();
        let row = all.get_mut(&id).ok_or_else(|| battle_not_found(id))?;
        row.expect(&[from])?;
        row.battle.status = to;
        row.battle.updated_at = at;
        if from.has_results() != to.has_results() {
            self.bump();
        }
        Ok(())
    }

    async fn answered_executing(
        &self,
        after: Option<(Timestamp, BattleId)>,
        limit: u32,
    ) -> LfResult<Vec<Battle>> {
        let all = self.read();
        let mut hits: Vec<&Battle> = all
            .values()
            .filter(|r| {
                r.battle.status == BattleStatus::Executing
                    && crate::rules::all_submitted(&r.contenders, &r.submissions)
            })
            .map(|r| &r.battle)
            .filter(|b| after.is_none_or(|a| (b.created_at, b.id) > a))
            .collect();
        hits.sort_by_key(|b| (b.created_at, b.id));
        Ok(hits.into_iter().take(limit as usize).cloned().collect())
    }

    async fn put_submission(
        &self,
        submission: &Submission,
        advance_to: Option<BattleStatus>,
        cost: Option<&lf_core::AnswerCost>,
    ) -> LfResult<StoredSubmission> {
        let mut all = self.write();
        let id = submission.battle_id;
        let row = all.get_mut(&id).ok_or_else(|| battle_not_found(id))?;
        if !row.contenders.iter().any(|c| c.id == submission.contender_id) {
            return Err(contender_not_found(id, submission.contender_id));
        }
        row.expect(&[BattleStatus::Open, BattleStatus::Executing])?;
        let (stored, replaced) = match row
            .submissions
            .iter_mut()
            .find(|s| s.contender_id == submission.contender_id)
        {
            Some(old) => {
                old.text = submission.text.clone();
                old.submitted_by = submission.submitted_by;
                old.updated_at = submission.updated_at;
                (old.clone(), true)
            }
            None => {
                if row.submissions.iter().any(|s| s.id == submission.id) {
                    return Err(LfError::conflict(format!("submission {} already exists", submission.id)));
                }
                row.submissions.push(submission.clone());
                (submission.clone(), false)
            }
        };
        if let Some(cost) = cost {
            let contender_id = Some(submission.contender_id);
            row.costs.retain(|k| k.contender_id != contender_id);
            row.costs.push(AnswerCostRecord {
                battle_id: id,
                contender_id,
                cost: cost.clone(),
                at: submission.updated_at,
            });
        }
        if let Some(to) = advance_to
            && row.battle.status == BattleStatus::Executing
            && crate::rules::all_submitted(&row.contenders, &row.submissions)
        {
            row.battle.status = to;
            row.battle.updated_at = submission.updated_at;
        }
        Ok(StoredSubmission { submission: stored, replaced, status: row.battle.status })
    }

    async fn put_vote(&self, vote: &Vote) -> LfResult<StoredVote> {
        let mut all = self.write();
        let id = vote.battle_id;
        let row = all.get_mut(&id).ok_or_else(|| battle_not_found(id))?;
        if let VotePick::Contender(c) = vote.pick
            && !row.contenders.iter().any(|x| x.id == c)
        {
            return Err(contender_not_found(id, c));
        }
        row.expect(&[BattleStatus::Voting])?;
        match row.votes.iter_mut().find(|v| v.voter == vote.voter) {
            Some(old) => {
                old.pick = vote.pick;
                old.rationale = vote.rationale.clone();
                old.updated_at = vote.updated_at;
                Ok(StoredVote { vote: old.clone(), replaced: true })
            }
            None => {
                row.votes.push(vote.clone());
                Ok(StoredVote { vote: vote.clone(), replaced: false })
            }
        }
    }

    async fn vote_of(&self, reach: Reach, id: BattleId, voter: LenserId) -> LfResult<Option<VotePick>> {
        let all = self.read();
        let row = all.get(&id).filter(|r| r.readable(reach)).ok_or_else(|| battle_not_found(id))?;
        Ok(row.votes.iter().find(|v| v.voter == voter).map(|v| v.pick))
    }

    async fn put_verdicts(
        &self,
        battle_id: BattleId,
        verdicts: &[Verdict],
        cost: Option<&AnswerCostRecord>,
    ) -> LfResult<()> {
        let mut all = self.write();
        let row = all.get_mut(&battle_id).ok_or_else(|| battle_not_found(battle_id))?;
        if let Some(v) = verdicts
            .iter()
            .find(|v| v.battle_id != battle_id || !row.contenders.iter().any(|c| c.id == v.contender_id))
        {
            return Err(contender_not_found(battle_id, v.contender_id));
        }
        row.expect(&[BattleStatus::Scoring])?;
        row.verdicts = verdicts.to_vec();
        if let Some(k) = cost {
            row.costs.retain(|c| c.contender_id.is_some());
            row.costs.push(AnswerCostRecord { battle_id, contender_id: None, ..k.clone() });
        }
        Ok(())
    }

    async fn add_judge_error(&self, error: &JudgeError) -> LfResult<()> {
        let mut all = self.write();
        let row = all.get_mut(&error.battle_id).ok_or_else(|| battle_not_found(error.battle_id))?;
        row.expect(&[BattleStatus::Scoring])?;
        row.judge_errors.push(error.clone());
        Ok(())
    }

    async fn add_answer_error(&self, error: &AnswerError) -> LfResult<()> {
        let mut all = self.write();
        let row = all.get_mut(&error.battle_id).ok_or_else(|| battle_not_found(error.battle_id))?;
        if !row.contenders.iter().any(|c| c.id == error.contender_id) {
            return Err(contender_not_found(error.battle_id, error.contender_id));
        }
        row.answer_errors.push(error.clone());
        Ok(())
    }

    async fn put_answer_cost(&self, record: &AnswerCostRecord) -> LfResult<()> {
        let mut all = self.write();
        let row = all.get_mut(&record.battle_id).ok_or_else(|| battle_not_found(record.battle_id))?;
        if let Some(c) = record.contender_id.filter(|c| !row.contenders.iter().any(|x| x.id == *c)) {
            return Err(contender_not_found(record.battle_id, c));
        }
        row.costs.retain(|k| k.contender_id != record.contender_id);
        row.costs.push(record.clone());
        Ok(())
    }

    async fn answer_costs(&self, reach: Reach, battle_id: BattleId) -> LfResult<Vec<AnswerCostRecord>> {
        let all = self.read();
        let row =
            all.get(&battle_id).filter(|r| r.readable(reach)).ok_or_else(|| battle_not_found(battle_id))?;
        let stands = |k: &&AnswerCostRecord| match k.contender_id {
            Some(c) => row.submissions.iter().any(|s| s.contender_id == c && s.updated_at == k.at),
            None => true,
        };
        let mut costs: Vec<AnswerCostRecord> = row.costs.iter().filter(stands).cloned().collect();
        // The judge's (no contender) last.
        costs.sort_by_key(|k| k.contender_id.map_or(usize::MAX, |c| row.slot_of(c)));
        Ok(costs)
    }

    async fn cost_means(&self, battle_type: Option<BattleType>) -> LfResult<Vec<CostMean>> {
        let all = self.read();
        let mut sums: HashMap<crate::model::ContenderRef, (u32, f64, f64)> = HashMap::new();
        let rows = all
            .values()
            .filter(|r| r.battle.status.has_results())
            .filter(|r| battle_type.is_none_or(|t| r.battle.battle_type == t));
        for r in rows {
            for k in &r.costs {
                let Some(c) = k.contender_id.and_then(|id| r.contenders.iter().find(|c| c.id == id)) else {
                    continue;
                };
                if !r.submissions.iter().any(|s| s.contender_id == c.id && s.updated_at == k.at) {
                    continue;
                }
                let sum = sums.entry(c.reference()).or_default();
                *sum = (sum.0 + 1, sum.1 + k.cost.cost_usd, sum.2 + k.cost.total_ms as f64);
            }
        }
        Ok(sums
            .into_iter()
            .map(|(reference, (n, cost, ms))| CostMean {
                reference,
                answers: n,
                mean_cost_usd: cost / f64::from(n),
                mean_total_ms: ms / f64::from(n),
            })
            .collect())
    }

    async fn close_battle(
        &self,
        id: BattleId,
        standings: &[Standing],
        winner: Option<ContenderId>,
        at: Timestamp,
    ) -> LfResult<()> {
        let mut all = self.write();
        let row = all.get_mut(&id).ok_or_else(|| battle_not_found(id))?;
        if let Some(s) = standings.iter().find(|s| !row.contenders.iter().any(|c| c.id == s.contender_id)) {
            return Err(contender_not_found(id, s.contender_id));
        }
        row.expect(&[BattleStatus::Scoring])?;
        self.bump();
        row.battle.status = BattleStatus::Closed;
        row.battle.winner = winner;
        row.battle.closed_at = Some(at);
        row.battle.updated_at = at;
        row.standings = standings.to_vec();
        Ok(())
    }

    async fn results_version(&self) -> LfResult<i64> {
        Ok(self.version.load(std::sync::atomic::Ordering::Relaxed))
    }

    async fn closed_results(&self, battle_type: Option<BattleType>) -> LfResult<Vec<BattleResult>> {
        let all = self.read();
        Ok(all
            .values()
            .filter(|r| r.battle.status.has_results())
            .filter(|r| battle_type.is_none_or(|t| r.battle.battle_type == t))
            .map(|r| BattleResult {
                battle_id: r.battle.id,
                tags: r.battle.tags.clone(),
                battle_type: r.battle.battle_type,
                closed_at: r.battle.closed_at.unwrap_or(r.battle.updated_at),
                entries: r
                    .standings
                    .iter()
                    .filter_map(|s| {
                        let c = r.contenders.iter().find(|c| c.id == s.contender_id)?;
                        let answer = r.submissions.iter().find(|x| x.contender_id == c.id);
                        Some(ResultEntry {
                            reference: c.reference(),
                            display_name: c.display_name.as_str().to_owned(),
                            rank: s.rank,
                            style: answer.map(|x| Style::of(x.text.as_str())),
                        })
                    })
                    .collect(),
            })
            .collect())
    }
}
