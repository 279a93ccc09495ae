//! [`MemoryExperiments`]: the in-memory [`ExperimentStore`].

use std::collections::{BTreeMap, HashMap};
use std::sync::RwLock;

use async_trait::async_trait;
use lf_battle::{Claim, decide_lease};
use lf_core::{LfError, LfResult, Page, PageRequest, Reach, Timestamp};

use super::compare::Outcome;
use super::model::{
    CellKey, CellResult, Experiment, ExperimentId, ExperimentStatus, ResultFilter, Tally, rank_of,
};
use super::ratings::RatedMatchup;
use super::store::ExperimentStore;
use crate::dataset::{DatasetId, Visibility};

#[derive(Debug, Default)]
struct Rows {
    experiments: HashMap<ExperimentId, Experiment>,
    /// Each claimed cell's (attempts, holder, lease_until).
    leases: HashMap<CellKey, (u32, String, Timestamp)>,
    /// Results, in key order (position, contender, repeat within an experiment).
    results: BTreeMap<CellKey, CellResult>,
    /// Matchups written (the matchups' version).
    matchups: i64,
}

/// Experiments in memory, for tests and embedding.
#[derive(Debug, Default)]
pub struct MemoryExperiments {
    rows: RwLock<Rows>,
}

impl MemoryExperiments {
    pub fn new() -> Self {
        Self::default()
    }
}

/// Whether `reach` reads `e`: its owner's, and everyone's not private.
fn reads(reach: Reach, e: &Experiment) -> bool {
    match reach {
        Reach::Everything => true,
        Reach::Lenser(me) => e.owner == me || e.visibility != Visibility::Private,
    }
}

fn of(rows: &Rows, id: ExperimentId) -> impl Iterator<Item = &CellResult> {
    rows.results.values().filter(move |r| r.key.experiment == id)
}

#[async_trait]
impl ExperimentStore for MemoryExperiments {
    async fn add_experiment(&self, experiment: &Experiment) -> LfResult<()> {
        let mut rows = self.rows.write().unwrap_or_else(|e| e.into_inner());
        if rows.experiments.contains_key(&experiment.id) {
            return Err(LfError::conflict("an experiment of this id exists"));
        }
        rows.experiments.insert(experiment.id, experiment.clone());
        Ok(())
    }

    async fn experiment(&self, reach: Reach, id: ExperimentId) -> LfResult<Option<Experiment>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        Ok(rows.experiments.get(&id).filter(|e| reads(reach, e)).cloned())
    }

    async fn of_dataset(
        &self,
        reach: Reach,
        dataset: DatasetId,
        page: PageRequest,
    ) -> LfResult<Page<Experiment>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<&Experiment> =
            rows.experiments.values().filter(|e| e.dataset == dataset && reads(reach, e)).collect();
        all.sort_by_key(|e| std::cmp::Reverse((e.created_at, e.id)));
        let total = all.len() as u64;
        let items =
            all.into_iter().skip(page.offset() as usize).take(page.limit() as usize).cloned().collect();
        Ok(Page::new(items, total, page))
    }

    async fn running(&self) -> LfResult<Vec<Experiment>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<Experiment> =
            rows.experiments.values().filter(|e| e.status == ExperimentStatus::Running).cloned().collect();
        all.sort_by_key(|e| (e.created_at, e.id));
        Ok(all)
    }

    async fn finish(&self, id: ExperimentId, to: ExperimentStatus, at: Timestamp) -> LfResult<bool> {
        let mut rows = self.rows.write().unwrap_or_else(|e| e.into_inner());
        match rows.experiments.get_mut(&id) {
            Some(e) if e.status == ExperimentStatus::Running => {
                e.status = to;
                e.updated_at = at;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn claim_cell(
        &self,
        cell: CellKey,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
        budget: u32,
    ) -> LfResult<Claim> {
        let mut rows = self.rows.write().unwrap_or_else(|e| e.into_inner());
        let done = rows.results.contains_key(&cell);
        let lease = rows.leases.entry(cell).or_insert_with(|| (0, holder.to_owned(), now));
        if done {
            return Ok(Claim::Spent { attempts: lease.0 });
        }
        match decide_lease((lease.0, &lease.1, lease.2), holder, now, budget) {
            Ok(n) => {
                *lease = (n, holder.to_owned(), until);
                Ok(Claim::Attempt(n))
            }
            Err(refused) => Ok(refused),
        }
    }

    async fn renew_cell(&self, cell: CellKey, holder: &str, until: Timestamp) -> LfResult<bool> {
        let mut rows = self.rows.write().unwrap_or_else(|e| e.into_inner());
        match rows.leases.get_mut(&cell) {
            Some(lease) if lease.1 == holder => {
                lease.2 = until;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn save_result(&self, result: &CellResult, holder: &str, now: Timestamp) -> LfResult<bool> {
        let mut rows = self.rows.write().unwrap_or_else(|e| e.into_inner());
        let holds = rows.leases.get(&result.key).is_some_and(|l| l.1 == holder || l.2 < now);
        if !holds || rows.results.contains_key(&result.key) {
            return Ok(false);
        }
        rows.matchups += result.matchups.len() as i64;
        rows.results.insert(result.key, result.clone());
        Ok(true)
    }

    async fn done(&self, id: ExperimentId, first: u32, last: u32) -> LfResult<Vec<CellKey>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        Ok(of(&rows, id).filter(|r| (first..=last).contains(&r.key.position)).map(|r| r.key).collect())
    }

    async fn tallies(&self, id: ExperimentId) -> LfResult<Vec<Tally>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        let mut by: BTreeMap<u16, (Tally, Vec<u64>)> = BTreeMap::new();
        for r in of(&rows, id) {
            let (t, latencies) = by.entry(r.key.contender).or_default();
            t.contender = r.key.contender;
            t.cells += 1;
            t.passed += u64::from(r.passed);
            t.errors += u64::from(r.error.is_some());
            t.score_sum += r.score;
            t.input_tokens += r.input_tokens;
            t.output_tokens += r.output_tokens;
            t.cost_usd += r.cost_usd + r.judge_cost_usd();
            t.credits += r.credits;
            if r.error.is_none() {
                latencies.push(r.latency_ms);
            }
        }
        Ok(by
            .into_values()
            .map(|(mut t, mut latencies)| {
                latencies.sort_unstable();
                let at = |p| rank_of(p, latencies.len() as u64).map(|i| latencies[i as usize]);
                t.latency_p50_ms = at(50);
                t.latency_p95_ms = at(95);
                t
            })
            .collect())
    }

    async fn results(
        &self,
        id: ExperimentId,
        filter: &ResultFilter,
        page: PageRequest,
    ) -> LfResult<Page<CellResult>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        let kept: Vec<&CellResult> = of(&rows, id).filter(|r| filter.keeps(r)).collect();
        let items = kept
            .iter()
            .skip(page.offset() as usize)
            .take(page.limit() as usize)
            .map(|r| CellResult { matchups: Vec::new(), ..(*r).clone() })
            .collect();
        Ok(Page::new(items, kept.len() as u64, page))
    }

    async fn outcomes(&self, id: ExperimentId, contender: u16, last: u32) -> LfResult<Vec<Outcome>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        Ok(of(&rows, id)
            .filter(|r| r.key.contender == contender && r.key.position <= last)
            .map(|r| Outcome {
                position: r.key.position,
                repeat: r.key.repeat,
                passed: r.passed,
                score: r.score,
            })
            .collect())
    }

    async fn matchups_version(&self) -> LfResult<i64> {
        Ok(self.rows.read().unwrap_or_else(|e| e.into_inner()).matchups)
    }

    async fn matchups(&self) -> LfResult<Vec<RatedMatchup>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        let shared = |r: &&CellResult| {
            rows.experiments.get(&r.key.experiment).is_some_and(|e| e.visibility != Visibility::Private)
        };
        Ok(rows
            .results
            .values()
            .filter(shared)
            .flat_map(|r| {
                r.matchups.iter().map(|m| RatedMatchup {
                    matchup: m.clone(),
                    tags: r.tags.clone(),
                    at: r.created_at,
                })
            })
            .collect())
    }
}
