//! Runs in memory, for tests and for apps that embed the engine.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use async_trait::async_trait;
use lf_core::{LenserId, LfError, LfResult, Page, PageRequest, Timestamp, WorkflowId};

use super::model::{
    Caused, EventBounds, Held, IdempotencyKey, Lease, LeaseToken, Room, Run, RunFilter, RunId, RunOrigin,
};
use super::store::RunStore;
use super::{IDEMPOTENCY_WINDOW_MICROS, run_not_found};
use crate::engine::{NodeRun, RunState, Slot};

struct Row {
    run: Run,
    slots: BTreeMap<Slot, NodeRun>,
    lease: Option<Lease>,
    wake_at: Option<Timestamp>,
    /// When its spend was charged to its agent ([`RunStore::mark_charged`]).
    charged_at: Option<Timestamp>,
}

impl Row {
    fn due(&self, now: Timestamp) -> bool {
        let s = &self.run.state;
        if s.status.is_final() {
            return false;
        }
        match &self.lease {
            Some(l) => l.expires_at <= now,
            // Whatever the clocks of the processes say.
            None if s.status == crate::engine::RunStatus::Pending
                || self.run.cancel_requested_by.is_some() =>
            {
                true
            }
            None => self.wake_at.is_none_or(|w| w <= now),
        }
    }

    /// When it becomes due if nothing else happens: a held run when its
    /// lease ends (a takeover, whatever its timers); a free one at once if
    /// it is pending or asked to cancel, else at its wake time.
    fn due_at(&self) -> Timestamp {
        if let Some(l) = &self.lease {
            return l.expires_at;
        }
        let s = &self.run.state;
        if s.status == crate::engine::RunStatus::Pending || self.run.cancel_requested_by.is_some() {
            return self.run.created_at;
        }
        self.wake_at.unwrap_or(self.run.created_at)
    }

    fn holds(&self, lease: &Lease) -> bool {
        self.lease.as_ref().is_some_and(|l| l.token == lease.token)
    }
}

/// A [`RunStore`] in a mutex.
#[derive(Default)]
pub struct MemoryRunStore {
    rows: Mutex<HashMap<RunId, Row>>,
}

impl MemoryRunStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn rows(&self) -> std::sync::MutexGuard<'_, HashMap<RunId, Row>> {
        self.rows.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn header(run: &Run) -> Run {
    let mut r = run.clone();
    r.state.slots.clear();
    r
}

fn by_key(
    rows: &HashMap<RunId, Row>,
    workflow: WorkflowId,
    starter: LenserId,
    key: &IdempotencyKey,
    now: Timestamp,
) -> Option<Run> {
    rows.values()
        .filter(|r| r.run.workflow_id == workflow && r.run.idempotency_key.as_ref() == Some(key))
        .filter(|r| r.run.started_by == starter)
        .filter(|r| now.as_micros() - r.run.created_at.as_micros() < IDEMPOTENCY_WINDOW_MICROS)
        .map(|r| header(&r.run))
        .next()
}

#[async_trait]
impl RunStore for MemoryRunStore {
    async fn create_run(&self, run: &Run) -> LfResult<(Run, bool)> {
        let mut rows = self.rows();
        if rows.contains_key(&run.id) {
            return Err(LfError::conflict(format!("run {} already exists", run.id)));
        }
        if let Some(key) = &run.idempotency_key
            && let Some(first) = by_key(&rows, run.workflow_id, run.started_by, key, run.created_at)
        {
            return Ok((first, false));
        }
        let stored = header(run);
        rows.insert(
            run.id,
            Row { run: stored.clone(), slots: BTreeMap::new(), lease: None, wake_at: None, charged_at: None },
        );
        Ok((stored, true))
    }

    async fn create_caused(&self, run: &Run, bounds: EventBounds) -> LfResult<Caused> {
        let mut rows = self.rows();
        if rows.contains_key(&run.id) {
            return Err(LfError::conflict(format!("run {} already exists", run.id)));
        }
        if let Some(key) = &run.idempotency_key
            && let Some(first) = by_key(&rows, run.workflow_id, run.started_by, key, run.created_at)
        {
            return Ok(Caused::Made(Box::new(first), false));
        }
        let root = run.root_run_id;
        let tree = || rows.values().map(|r| &r.run).filter(|r| r.id == root || r.root_run_id == root);
        if tree().any(|r| r.workflow_id == run.workflow_id) {
            return Ok(Caused::InTree);
        }
        if tree().filter(|r| r.id != root).count() as u64 >= bounds.tree_max {
            let first = match rows.get_mut(&root) {
                Some(r) if r.run.tree_full_at.is_none() => {
                    r.run.tree_full_at = Some(run.created_at);
                    true
                }
                _ => false,
            };
            return Ok(Caused::TreeFull { first });
        }
        let since = run.created_at.as_micros() - 60_000_000;
        let lately = rows
            .values()
            .filter(|r| r.run.origin == RunOrigin::Event && r.run.started_by == run.started_by)
            .filter(|r| r.run.created_at.as_micros() > since)
            .count() as u64;
        if lately >= bounds.per_minute {
            return Ok(Caused::TooFast);
        }
        let stored = header(run);
        rows.insert(
            run.id,
            Row { run: stored.clone(), slots: BTreeMap::new(), lease: None, wake_at: None, charged_at: None },
        );
        Ok(Caused::Made(Box::new(stored), true))
    }

    async fn get_run(&self, id: RunId) -> LfResult<Run> {
        self.rows().get(&id).map(|r| header(&r.run)).ok_or_else(|| run_not_found(id))
    }

    async fn load_run(&self, id: RunId) -> LfResult<Run> {
        let rows = self.rows();
        let row = rows.get(&id).ok_or_else(|| run_not_found(id))?;
        let mut run = header(&row.run);
        run.state.slots = row.slots.clone();
        Ok(run)
    }

    async fn find_by_key(
        &self,
        workflow: WorkflowId,
        starter: LenserId,
        key: &IdempotencyKey,
        now: Timestamp,
    ) -> LfResult<Option<Run>> {
        Ok(by_key(&self.rows(), workflow, starter, key, now))
    }

    async fn list_runs(&self, me: LenserId, filter: &RunFilter, page: PageRequest) -> LfResult<Page<Run>> {
        let rows = self.rows();
        let mut all: Vec<&Run> = rows
            .values()
            .map(|r| &r.run)
            .filter(|r| match filter.workflow_id {
                Some(w) => r.workflow_id == w,
                None => r.started_by == me || r.workflow_owner == me,
            })
            .filter(|r| filter.started_by.is_none_or(|s| r.started_by == s))
            .filter(|r| filter.status.is_none_or(|s| r.state.status == s))
            .collect();
        all.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        let total = all.len() as u64;
        let items =
            all.into_iter().skip(page.offset() as usize).take(page.limit() as usize).map(header).collect();
        Ok(Page::new(items, total, page))
    }

    async fn claim(&self, owner: &str, now: Timestamp, lease_ms: u64, room: &Room) -> LfResult<Vec<Lease>> {
        let mut rows = self.rows();
        // Each starter's due runs, its sub-runs first, then oldest due first.
        let mut due: Vec<(bool, Timestamp, RunId, LenserId)> = rows
            .values()
            .filter(|r| r.due(now))
            .map(|r| {
                let nested = r.run.origin == RunOrigin::SubWorkflow;
                (!nested, r.wake_at.unwrap_or(r.run.created_at), r.run.id, r.run.started_by)
            })
            .collect();
        due.sort();
        let mut nth: HashMap<LenserId, u64> = HashMap::new();
        let mut turns: Vec<(u64, Timestamp, RunId, LenserId)> = due
            .into_iter()
            .filter_map(|(capped, at, id, starter)| {
                let n = nth.entry(starter).or_default();
                *n += 1;
                let turn = room.turn(starter, *n);
                (!capped || turn <= u64::from(room.share)).then_some((turn, at, id, starter))
            })
            .collect();
        turns.sort();
        let mut out = Vec::new();
        for (_, _, id, starter) in turns.into_iter().take(room.limit as usize) {
            let lease = Lease {
                run: id,
                starter,
                token: LeaseToken::new(),
                owner: owner.to_owned(),
                expires_at: now.plus_micros(lease_ms as i64 * 1_000),
            };
            if let Some(r) = rows.get_mut(&id) {
                r.lease = Some(lease.clone());
            }
            out.push(lease);
        }
        Ok(out)
    }

    async fn heartbeat(&self, lease: &Lease, now: Timestamp, lease_ms: u64) -> LfResult<Held> {
        let mut rows = self.rows();
        let Some(r) = rows.get_mut(&lease.run) else { return Ok(Held::Lost) };
        if !r.holds(lease) || r.run.state.status.is_final() {
            return Ok(Held::Lost);
        }
        if let Some(l) = &mut r.lease {
            l.expires_at = now.plus_micros(lease_ms as i64 * 1_000);
        }
        Ok(Held::Yes { cancel_requested_by: r.run.cancel_requested_by.clone() })
    }

    async fn save(
        &self,
        lease: &Lease,
        state: &RunState,
        slots: &[(Slot, NodeRun)],
        release: bool,
    ) -> LfResult<bool> {
        let mut rows = self.rows();
        let Some(r) = rows.get_mut(&lease.run) else { return Ok(false) };
        if !r.holds(lease) {
            return Ok(false);
        }
        let mut header = state.clone();
        header.slots.clear();
        r.run.state = header;
        for (s, n) in slots {
            r.slots.insert(*s, n.clone());
        }
        r.wake_at = state.resume_at();
        if release || state.status.is_final() {
            r.lease = None;
        }
        Ok(true)
    }

    async fn request_cancel(&self, id: RunId, by: &str, now: Timestamp) -> LfResult<Run> {
        let mut rows = self.rows();
        let r = rows.get_mut(&id).ok_or_else(|| run_not_found(id))?;
        if !r.run.state.status.is_final() && r.run.cancel_requested_by.is_none() {
            r.run.cancel_requested_by = Some(by.to_owned());
            if r.lease.is_none() {
                r.wake_at = Some(now);
            }
        }
        Ok(header(&r.run))
    }

    async fn wake(&self, id: RunId, now: Timestamp) -> LfResult<()> {
        let mut rows = self.rows();
        let r = rows.get_mut(&id).ok_or_else(|| run_not_found(id))?;
        if r.run.state.status.is_final() {
            return Ok(());
        }
        let mut woke = false;
        for n in r.slots.values_mut() {
            if n.waiting_for().is_some() && n.wake_at.is_some_and(|w| w > now) {
                n.wake_at = Some(now);
                woke = true;
            }
        }
        if woke && r.lease.is_none() {
            r.wake_at = Some(r.wake_at.map_or(now, |w| w.min(now)));
        }
        Ok(())
    }

    async fn to_charge(&self, limit: u32) -> LfResult<Vec<RunId>> {
        let rows = self.rows();
        let mut ended: Vec<(Timestamp, RunId)> = rows
            .values()
            .filter(|r| r.run.agent.is_some() && r.charged_at.is_none())
            .filter_map(|r| r.run.state.finished_at.map(|at| (at, r.run.id)))
            .collect();
        ended.sort();
        Ok(ended.into_iter().take(limit as usize).map(|(_, id)| id).collect())
    }

    async fn mark_charged(&self, id: RunId, at: Timestamp) -> LfResult<()> {
        let mut rows = self.rows();
        let row = rows.get_mut(&id).ok_or_else(|| run_not_found(id))?;
        row.charged_at.get_or_insert(at);
        Ok(())
    }

    async fn next_due(&self, full: &[LenserId]) -> LfResult<Option<Timestamp>> {
        let rows = self.rows();
        let waits = |r: &&Row| full.contains(&r.run.started_by) && r.run.origin != RunOrigin::SubWorkflow;
        Ok(rows.values().filter(|r| !r.run.state.status.is_final() && !waits(r)).map(Row::due_at).min())
    }
}
