//! The claim loop and the drive of one run.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_trait::async_trait;
use lf_core::meter::{RunEnd, meter};
use lf_core::{Clock, LenserId, LfResult, Reach, SystemClock, Timestamp};
use lf_workflow::engine::{
    Action, Event, Failure, LogLevel, LogLine, NodeStatus, Plan, RunError, RunState, RunStatus, Slot, Tick,
    Usage, step,
};
use lf_workflow::run::{Held, Lease, Room, Run, RunId, RunSignal, RunStore};
use lf_workflow::{VersionSelector, WorkflowStore, WorkflowVersionId};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use tracing::field::Empty;

use crate::executor::{Checkpoint, Checkpoints, Executors, Job};
use crate::schedule::Scheduler;

/// How a runner behaves.
#[derive(Clone, Debug)]
pub struct RunnerConfig {
    /// This process, as leases name it.
    pub owner: String,
    /// How long a claim holds without a heartbeat (default 30 s); a run
    /// whose holder died is taken over after it.
    pub lease: Duration,
    /// Runs this process drives at once (default 16).
    pub max_runs: usize,
    /// Of those, the most one starter's runs take while the claim loop
    /// claims more (default 4): due runs are claimed in turns by starter,
    /// and a starter at its share waits for one of its runs to end here
    /// (or for another process), whoever else is waiting or not
    /// ([`lf_workflow::run::Room`]).
    pub per_starter: usize,
    /// How long shutdown waits for running nodes (default 10 s).
    pub grace: Duration,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            owner: format!("runner-{}-{}", std::process::id(), RunId::new()),
            lease: Duration::from_secs(30),
            max_runs: 16,
            per_starter: 4,
            grace: Duration::from_secs(10),
        }
    }
}

/// Hears of every run that ends, from the one save that ended it (so once
/// for each end this process makes), and catches up on ends nobody heard.
#[async_trait]
pub trait RunEnds: Send + Sync {
    /// `run` ended in `state` (completed, failed or cancelled). Returns at
    /// once: slow work goes to a task of its own.
    fn ended(&self, run: &Run, state: &RunState);

    /// Makes up for ends that were not heard (their process died first,
    /// or a run was cancelled before any runner held it). The runner calls
    /// it when it starts and every [`CATCH_UP`] until it shuts down.
    async fn catch_up(&self) {}
}

/// How often a runner calls [`RunEnds::catch_up`].
pub const CATCH_UP: Duration = Duration::from_secs(60);

/// Claims due runs and drives them. Cheap to clone.
#[derive(Clone)]
pub struct Runner {
    inner: Arc<Inner>,
}

struct Inner {
    runs: Arc<dyn RunStore>,
    workflows: Arc<dyn WorkflowStore>,
    executors: Executors,
    config: RunnerConfig,
    clock: Arc<dyn Clock>,
    /// Something may be due: a new run, a cancel request, a drive ended.
    wake: Notify,
    /// The runs this process drives, each with its own wake for cancels,
    /// and its starter.
    active: Mutex<HashMap<RunId, (Arc<Notify>, LenserId)>>,
    plans: Mutex<HashMap<WorkflowVersionId, Arc<Plan>>>,
    /// Set at shutdown: claim nothing more, start no more nodes.
    draining: CancellationToken,
    /// Set when the grace period is over: stop, release, return.
    stop: CancellationToken,
    /// Starts the runs of scheduled workflows, when the process has one.
    scheduler: std::sync::OnceLock<Scheduler>,
    /// Hears of every run that ends.
    ends: std::sync::OnceLock<Arc<dyn RunEnds>>,
    /// Whether the claim loop runs (from its start until it returns or
    /// panics).
    claiming: AtomicBool,
}

/// The plans kept in memory (versions are immutable, so a plan never goes stale).
const MAX_PLANS: usize = 256;

impl Runner {
    pub fn new(
        runs: Arc<dyn RunStore>,
        workflows: Arc<dyn WorkflowStore>,
        executors: Executors,
        config: RunnerConfig,
    ) -> Self {
        Self::with_clock(runs, workflows, executors, config, Arc::new(SystemClock))
    }

    pub fn with_clock(
        runs: Arc<dyn RunStore>,
        workflows: Arc<dyn WorkflowStore>,
        executors: Executors,
        config: RunnerConfig,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Runner {
            inner: Arc::new(Inner {
                runs,
                workflows,
                executors,
                config,
                clock,
                wake: Notify::new(),
                active: Mutex::default(),
                plans: Mutex::default(),
                draining: CancellationToken::new(),
                stop: CancellationToken::new(),
                scheduler: std::sync::OnceLock::new(),
                ends: std::sync::OnceLock::new(),
                claiming: AtomicBool::new(false),
            }),
        }
    }

    /// What the run service tells when a run is made or a cancel asked.
    pub fn signal(&self) -> Arc<dyn RunSignal> {
        Arc::new(Signal(Arc::downgrade(&self.inner)))
    }

    /// Starts claiming, on the current tokio runtime. Returns the task that
    /// ends after [`Runner::shutdown`].
    pub fn start(&self) -> tokio::task::JoinHandle<()> {
        let inner = self.inner.clone();
        tokio::spawn(inner.clone().listen());
        if let Some(s) = inner.scheduler.get() {
            tokio::spawn(s.clone().run(inner.draining.clone()));
        }
        if let Some(ends) = inner.ends.get() {
            tokio::spawn(catch_up(ends.clone(), inner.draining.clone()));
        }
        tokio::spawn(async move { inner.claim_loop().await })
    }

    /// Fires scheduled workflows' ticks too, from [`Runner::start`] until
    /// [`Runner::shutdown`] (set it before starting; a second one is
    /// ignored).
    pub fn schedule(&self, scheduler: Scheduler) {
        let _ = self.inner.scheduler.set(scheduler);
    }

    /// Tells `ends` of every run that ends, and has it catch up (set it
    /// before starting; a second one is ignored).
    pub fn on_end(&self, ends: Arc<dyn RunEnds>) {
        let _ = self.inner.ends.set(ends);
    }

    /// Cancelled when [`Runner::shutdown`] begins: for work started on the
    /// runner's behalf that must tell a stop from a failure.
    pub fn stopping(&self) -> CancellationToken {
        self.inner.draining.clone()
    }

    /// Whether it claims runs: started, its claim loop running, and not
    /// shutting down.
    pub fn alive(&self) -> bool {
        self.inner.claiming.load(Ordering::Acquire) && !self.inner.draining.is_cancelled()
    }

    /// How many runs this process drives now.
    pub fn active(&self) -> usize {
        self.inner.active_runs()
    }

    /// Stops claiming, lets running nodes finish within the grace period,
    /// then releases every run it holds (the nodes still running are run
    /// again, with the same attempt, by whoever takes the run next).
    pub async fn shutdown(&self) {
        let inner = &self.inner;
        inner.draining.cancel();
        inner.wake.notify_waiters();
        let deadline = tokio::time::Instant::now() + inner.config.grace;
        while self.active() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        inner.stop.cancel();
        while self.active() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Calls [`RunEnds::catch_up`] now and every [`CATCH_UP`] until `draining`.
async fn catch_up(ends: Arc<dyn RunEnds>, draining: CancellationToken) {
    loop {
        ends.catch_up().await;
        tokio::select! {
            _ = draining.cancelled() => return,
            _ = tokio::time::sleep(CATCH_UP) => {}
        }
    }
}

struct Signal(Weak<Inner>);

impl RunSignal for Signal {
    fn started(&self, _: RunId) {
        if let Some(i) = self.0.upgrade() {
            i.wake.notify_one();
        }
    }

    fn cancel_requested(&self, run: RunId) {
        if let Some(i) = self.0.upgrade() {
            i.woken_for(run);
        }
    }

    fn woken(&self, run: RunId) {
        if let Some(i) = self.0.upgrade() {
            i.woken_for(run);
        }
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

/// 64 random bits for the engine's jitter.
fn seed() -> u64 {
    RunId::new().as_uuid().as_u128() as u64
}

impl Inner {
    /// Tells whoever hears ends that `run` ended in `state`.
    fn ended(&self, run: &Run, state: &RunState) {
        let end = match state.status {
            RunStatus::Completed => Some(RunEnd::Completed),
            RunStatus::Failed => Some(RunEnd::Failed),
            RunStatus::Cancelled => Some(RunEnd::Cancelled),
            _ => None,
        };
        if let Some(end) = end {
            meter().run_ended(end);
        }
        if let Some(ends) = self.ends.get() {
            ends.ended(run, state);
        }
    }

    /// How many runs this process drives now.
    fn active_runs(&self) -> usize {
        self.active.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// What a claim may take now: the free slots, each starter's share
    /// less the runs of theirs this process drives.
    fn room(&self) -> Room {
        let active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        let mut held = BTreeMap::new();
        for (_, starter) in active.values() {
            *held.entry(*starter).or_insert(0) += 1;
        }
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Room {
            limit: clamp(self.config.max_runs.saturating_sub(active.len())),
            share: clamp(self.config.per_starter.max(1)),
            held,
        }
    }

    async fn claim_loop(self: Arc<Self>) {
        /// Clears `claiming` however the loop ends.
        struct Claiming<'a>(&'a AtomicBool);
        impl Drop for Claiming<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        self.claiming.store(true, Ordering::Release);
        let _claiming = Claiming(&self.claiming);
        let lease_ms = ms(self.config.lease);
        loop {
            if self.draining.is_cancelled() {
                return;
            }
            let room = self.room();
            let free = room.limit as usize;
            let mut claimed = 0;
            if free > 0 {
                match self.runs.claim(&self.config.owner, self.clock.now(), lease_ms, &room).await {
                    Ok(leases) => {
                        claimed = leases.len();
                        for lease in leases {
                            self.clone().spawn_drive(lease);
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "claiming workflow runs failed; trying again in a second");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                }
            }
            if claimed > 0 && claimed == free {
                continue;
            }
            // The due queue, for the metrics: every run that is due, those
            // of starters at their share here and those no slot is free
            // for included (a full batch leaves exactly those waiting).
            let queue = self.runs.next_due(&[]).await;
            let now = self.clock.now();
            let due_for = match &queue {
                Ok(Some(at)) => until(*at, now),
                _ => Duration::ZERO,
            };
            meter().runner(self.active_runs(), self.config.max_runs, due_for);
            // The wake: not for runs this process would not claim now (no
            // slot is free, or their starters are at their share: a drive
            // ending here wakes it).
            let full = self.room().full();
            let due = match queue {
                _ if free == 0 => Ok(None),
                Ok(_) if !full.is_empty() => self.runs.next_due(&full).await,
                queue => queue,
            };
            let wait = match due {
                Ok(Some(at)) => until(now, at).clamp(Duration::from_millis(5), self.config.lease),
                Ok(None) => self.config.lease,
                Err(_) => Duration::from_secs(1),
            };
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(wait) => {}
                _ = self.draining.cancelled() => return,
            }
        }
    }

    /// Wakes this process for other processes' new runs and cancel
    /// requests, while the store can tell of them (PostgreSQL); subscribes
    /// again a second after a lost subscription.
    async fn listen(self: Arc<Self>) {
        while !self.draining.is_cancelled() {
            let mut wakeups = match self.runs.wakeups().await {
                Ok(Some(w)) => w,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "listening for other processes' workflow runs failed; trying again in a second");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            loop {
                tokio::select! {
                    next = wakeups.next() => match next {
                        Ok(run) => self.woken_for(run),
                        Err(e) => {
                            tracing::warn!(error = %e, "the subscription to other processes' workflow runs ended; subscribing again");
                            tokio::time::sleep(Duration::from_secs(1)).await;
                            break;
                        }
                    },
                    _ = self.draining.cancelled() => return,
                }
            }
        }
    }

    /// Run `run` may be due, asked to stop, or woken for its waiting steps:
    /// its drive looks (at once, through a heartbeat, then waking its
    /// waiting steps) if this process holds it, else the claim loop.
    fn woken_for(&self, run: RunId) {
        let held = self.active.lock().unwrap_or_else(|p| p.into_inner()).get(&run).map(|(n, _)| n.clone());
        match held {
            Some(n) => n.notify_one(),
            None => self.wake.notify_one(),
        }
    }

    fn spawn_drive(self: Arc<Self>, lease: Lease) {
        let notify = Arc::new(Notify::new());
        self.active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(lease.run, (notify.clone(), lease.starter));
        let span = tracing::info_span!(
            "workflow_run",
            otel.name = "workflow run",
            lf.run.id = %lease.run,
            lf.workflow.id = Empty,
            otel.status_code = Empty,
        );
        tokio::spawn(async move {
            let run = lease.run;
            if let Err(e) = self.clone().drive(lease, notify).instrument(span).await {
                tracing::warn!(%run, error = %e, "driving a workflow run failed; another claim will resume it");
            }
            self.active.lock().unwrap_or_else(|p| p.into_inner()).remove(&run);
            self.wake.notify_one();
        });
    }

    async fn plan(&self, run: &Run) -> LfResult<Result<Arc<Plan>, String>> {
        if let Some(p) = self.plans.lock().unwrap_or_else(|p| p.into_inner()).get(&run.version_id) {
            return Ok(Ok(p.clone()));
        }
        let version = self
            .workflows
            .get_version(Reach::Everything, run.workflow_id, VersionSelector::Id(run.version_id))
            .await?;
        let plan = match Plan::new(&version) {
            Ok(p) => Arc::new(p),
            Err(e) => return Ok(Err(e)),
        };
        let mut plans = self.plans.lock().unwrap_or_else(|p| p.into_inner());
        if plans.len() >= MAX_PLANS {
            plans.clear();
        }
        plans.insert(run.version_id, plan.clone());
        Ok(Ok(plan))
    }

    async fn drive(self: Arc<Self>, lease: Lease, cancel: Arc<Notify>) -> LfResult<()> {
        let run = self.runs.load_run(lease.run).await?;
        tracing::Span::current().record("lf.workflow.id", tracing::field::display(run.workflow_id));
        let plan = match self.plan(&run).await? {
            Ok(p) => p,
            Err(why) => {
                let mut state = run.state.clone();
                state.status = RunStatus::Failed;
                state.finished_at = Some(self.clock.now());
                state.error = Some(RunError { code: "not_runnable".into(), message: why, node: None });
                if self.runs.save(&lease, &state, &[], true).await? {
                    self.ended(&run, &state);
                }
                return Ok(());
            }
        };
        let mut state = run.state.clone();
        if state.status == RunStatus::Pending {
            meter().run_started(until(run.created_at, self.clock.now()));
        }
        if state.status == RunStatus::Pending
            && let Some(parent) = run.resume_from
        {
            reuse_completed(&mut state, &self.runs.load_run(parent).await?.state, &plan);
        }
        let (saves, saved) = tokio::sync::mpsc::unbounded_channel();
        let mut d = Drive {
            inner: &self,
            run: &run,
            plan,
            lease,
            state,
            tasks: JoinSet::new(),
            running: HashMap::new(),
            lost: false,
            saves,
            saved,
        };
        d.apply(Event::Started).await?;
        if let Some(by) = run.cancel_requested_by.clone() {
            d.apply(Event::CancelAsked { by }).await?;
        }
        d.run_loop(&cancel).await
    }
}

/// Copies a failed run's completed steps into a new run that resumes it.
fn reuse_completed(state: &mut RunState, parent: &RunState, plan: &Plan) {
    for (slot, n) in &parent.slots {
        if slot.item.is_none() && slot.node != plan.trigger && n.status == NodeStatus::Completed {
            state.slots.insert(*slot, n.clone());
        }
    }
}

fn until(now: Timestamp, at: Timestamp) -> Duration {
    Duration::from_micros(at.as_micros().saturating_sub(now.as_micros()).max(0) as u64)
}

/// One run being driven: its state, its running attempts, its lease.
struct Drive<'a> {
    inner: &'a Arc<Inner>,
    run: &'a Run,
    plan: Arc<Plan>,
    lease: Lease,
    state: RunState,
    tasks: JoinSet<(Slot, u32, Result<crate::Done, Failure>)>,
    running: HashMap<Slot, tokio::task::AbortHandle>,
    lost: bool,
    /// Where running attempts ask to save where they are ([`Job::checkpoint`]).
    saves: tokio::sync::mpsc::UnboundedSender<Checkpoint>,
    saved: tokio::sync::mpsc::UnboundedReceiver<Checkpoint>,
}

impl Drive<'_> {
    fn tick(&self) -> Tick {
        Tick { now: self.inner.clock.now(), seed: seed() }
    }

    /// Steps the engine, writes what changed under the lease, then starts
    /// what it asked for (written first, so a takeover runs it again with
    /// the same attempt).
    async fn apply(&mut self, event: Event) -> LfResult<()> {
        let tick = self.tick();
        let out = step(&self.plan, &mut self.state, event, tick);
        if out.actions.contains(&Action::Release) {
            self.lost = true;
            return Ok(());
        }
        let slots: Vec<_> =
            out.changed.iter().filter_map(|s| self.state.slots.get(s).map(|n| (*s, n.clone()))).collect();
        let ended = self.state.status.is_final();
        let finished = out.actions.iter().any(|a| matches!(a, Action::Finish { .. }));
        if (!slots.is_empty() || ended || finished)
            && !self.inner.runs.save(&self.lease, &self.state, &slots, ended).await?
        {
            self.lost = true;
            return Ok(());
        }
        if ended {
            if self.state.status == RunStatus::Failed {
                tracing::Span::current().record("otel.status_code", "ERROR");
            }
            // The one save that ended it: the end is told once.
            self.inner.ended(self.run, &self.state);
        }
        for a in out.actions {
            match a {
                Action::Run { slot, attempt, input, timeout_ms } => {
                    self.start(slot, attempt, input, timeout_ms)
                }
                Action::Abort { slot } => {
                    if let Some(h) = self.running.remove(&slot) {
                        h.abort();
                    }
                }
                Action::Finish { .. } | Action::Release => {}
            }
        }
        Ok(())
    }

    fn start(&mut self, slot: Slot, attempt: u32, input: serde_json::Value, timeout_ms: u64) {
        if self.inner.draining.is_cancelled() {
            // Recorded as running: whoever takes the run next starts it.
            return;
        }
        let node = self.plan.node(slot.node);
        let idempotency_key =
            node.outside_effect.then(|| crate::executor::attempt_key(self.run.id, &node.key, slot, attempt));
        let saved = self.state.get(slot).and_then(|n| n.checkpoint().cloned());
        let credits_left =
            self.state.limits.budget_credits.map(|b| b.saturating_sub(self.state.usage().credits));
        let job = Job {
            run: self.run.id,
            workflow_id: self.run.workflow_id,
            workflow_owner: self.run.workflow_owner,
            started_by: self.run.started_by,
            agent: self.run.agent,
            global_model_id: self.run.global_model_id.clone(),
            plan: self.plan.clone(),
            slot,
            attempt,
            input,
            idempotency_key,
            saved,
            credits_left,
            saves: Some(Checkpoints(self.saves.clone())),
            secrets: Default::default(),
        };
        let inner = self.inner.clone();
        // A child of the run's span, which is current here.
        let span = tracing::info_span!(
            "workflow_step",
            otel.name = %format_args!("step {}", node.key),
            lf.step.key = %node.key,
            lf.step.type = %node.node_type,
            lf.step.attempt = attempt,
            lf.step.item = slot.item,
            "error.type" = Empty,
            otel.status_code = Empty,
        );
        let handle = self.tasks.spawn(
            async move {
                let limit = Duration::from_millis(timeout_ms);
                let result = match tokio::time::timeout(limit, inner.executors.execute(&job)).await {
                    Ok(r) => r,
                    Err(_) => Err(Failure::new(
                        "timeout",
                        format!("the step took longer than its timeout of {timeout_ms} ms"),
                    )),
                };
                if let Err(failure) = &result {
                    let span = tracing::Span::current();
                    span.record("error.type", failure.code.as_str());
                    span.record("otel.status_code", "ERROR");
                }
                (slot, attempt, result)
            }
            .instrument(span),
        );
        self.running.insert(slot, handle);
    }

    async fn run_loop(&mut self, cancel: &Notify) -> LfResult<()> {
        let beat_every = self.inner.config.lease / 3;
        let lease_ms = ms(self.inner.config.lease);
        let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + beat_every, beat_every);
        loop {
            if self.lost {
                self.tasks.abort_all();
                return Ok(());
            }
            if self.state.status.is_final() {
                self.tasks.abort_all();
                return Ok(());
            }
            let now = self.inner.clock.now();
            let wake = self.state.next_wake();
            if self.running.is_empty() {
                // Nothing runs: give the run back until its timer, unless that is soon.
                let far = wake.is_none_or(|w| until(now, w) > self.inner.config.lease / 2);
                if far || self.inner.draining.is_cancelled() {
                    self.inner.runs.save(&self.lease, &self.state, &[], true).await?;
                    return Ok(());
                }
            }
            let timer = wake.map_or(self.inner.config.lease, |w| until(now, w));
            tokio::select! {
                Some(joined) = self.tasks.join_next(), if !self.tasks.is_empty() => {
                    let Ok((slot, attempt, result)) = joined else { continue };
                    self.running.remove(&slot);
                    let event = match result {
                        Ok(crate::Done { hold: Some(h), usage, .. }) => {
                            Event::NodeCheckpoint { slot, attempt, state: h.state, usage, wait: Some(h.wait) }
                        }
                        Ok(crate::Done { again_at: Some(until), .. }) => Event::NodeDeferred { slot, attempt, until },
                        Ok(done) => Event::NodeFinished {
                            slot,
                            attempt,
                            output: done.output,
                            usage: done.usage,
                            log: done.log,
                        },
                        Err(failure) => Event::NodeFailed { slot, attempt, failure, usage: Usage::default() },
                    };
                    let finished = matches!(event, Event::NodeFinished { .. });
                    self.apply(event).await?;
                    if finished {
                        self.trace_log(slot, attempt);
                    }
                }
                _ = tokio::time::sleep(timer), if wake.is_some() => {
                    self.apply(Event::TimerFired).await?;
                }
                Some(save) = self.saved.recv() => self.checkpoint(save).await?,
                _ = beat.tick() => self.heartbeat(lease_ms).await?,
                _ = cancel.notified() => {
                    self.heartbeat(lease_ms).await?;
                    if !self.lost && self.state.waiting().next().is_some() {
                        self.apply(Event::Woken).await?;
                    }
                }
                // Past the grace period: what still runs is run again by the next holder.
                _ = self.inner.stop.cancelled() => {
                    self.tasks.abort_all();
                    self.inner.runs.save(&self.lease, &self.state, &[], true).await?;
                    return Ok(());
                }
            }
        }
    }

    /// Writes what a running attempt saved of itself, and tells it whether
    /// it was written (not when the attempt is no longer current, or the
    /// run was lost).
    async fn checkpoint(&mut self, save: Checkpoint) -> LfResult<()> {
        let Checkpoint { slot, attempt, state, usage, saved } = save;
        let current = |s: &RunState| {
            s.get(slot).is_some_and(|n| n.status == NodeStatus::Running && n.attempt == attempt)
        };
        let was = current(&self.state) && !self.lost;
        if was {
            self.apply(Event::NodeCheckpoint { slot, attempt, state, usage, wait: None }).await?;
        }
        let _ = saved.send(was && !self.lost && current(&self.state));
        Ok(())
    }

    /// Writes the line the attempt at `slot` wrote to the run's log to the
    /// server's log too, once the run's rows hold it as the step's result
    /// (not when the answer came too late, or the run was lost: whoever
    /// runs the step again writes it then).
    fn trace_log(&self, slot: Slot, attempt: u32) {
        let Some(n) = self.state.get(slot) else { return };
        if self.lost || n.status != NodeStatus::Completed || n.attempt != attempt {
            return;
        }
        if let Some(line) = &n.log {
            trace_line(self.run, &self.plan.node(slot.node).key, slot.item, line);
        }
    }

    async fn heartbeat(&mut self, lease_ms: u64) -> LfResult<()> {
        match self.inner.runs.heartbeat(&self.lease, self.inner.clock.now(), lease_ms).await? {
            Held::Lost => self.lost = true,
            Held::Yes { cancel_requested_by: Some(by) } => self.apply(Event::CancelAsked { by }).await?,
            Held::Yes { cancel_requested_by: None } => {}
        }
        Ok(())
    }
}

/// The most characters of a step's log line the server's log shows; the
/// run's log keeps all of it.
const TRACED_CHARS: usize = 4_096;

/// A step's log line in the server's log, at the step's level, naming the
/// run, its workflow and the step (and the loop item).
fn trace_line(run: &Run, step: &str, item: Option<u32>, line: &LogLine) {
    let text = OneLine(&line.message);
    macro_rules! at {
        ($level:expr) => {
            tracing::event!($level, run_id = %run.id, workflow_id = %run.workflow_id, step, item, "{text}")
        };
    }
    match line.level {
        LogLevel::Debug => at!(tracing::Level::DEBUG),
        LogLevel::Info => at!(tracing::Level::INFO),
        LogLevel::Warn => at!(tracing::Level::WARN),
        LogLevel::Error => at!(tracing::Level::ERROR),
    }
}

/// A text as one line of the server's log: its control characters escaped,
/// so that what a workflow writes cannot pass for lines of the server's
/// own, and at most [`TRACED_CHARS`] characters of it. Formatted only when
/// the level is logged.
struct OneLine<'a>(&'a str);

impl std::fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write;
        for c in lf_core::clip(self.0, TRACED_CHARS).chars() {
            if c.is_control() {
                for e in c.escape_debug() {
                    f.write_char(e)?;
                }
            } else {
                f.write_char(c)?;
            }
        }
        Ok(())
    }
}
