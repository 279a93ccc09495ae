//! Experiments' cells, asked on the runner ([`ExperimentCells`], lf-eval's
//! [`ExperimentRunner`]).
//!
//! An experiment's matrix is walked a page of cases at a time (the cells
//! with a result are skipped), so nothing holds the whole matrix: at most
//! `concurrency` cells are asked at once, each through its endpoint's
//! client (which keeps the endpoint's own concurrency limit). Each
//! contender is made ready once per walk and asked one attempt at a time
//! by [`crate::experiment_contenders`] (a profile, an AI Lenser, a pinned
//! lens version, a workflow run keyed by the cell).
//!
//! Each cell follows the battle asks' durable rule (lf-battle's asks
//! module): an attempt is counted ([`ExperimentStore::claim_cell`]) before
//! the model is asked, at most [`CELL_ATTEMPTS`] of them across every
//! process, under a lease renewed while asking and taken over once
//! expired; a 429 waits its `retry_after_seconds` and any other INTERNAL
//! failure 1 s before the next attempt (`asks::again_after`); other
//! refusals fail the cell at once. A result (the answer, or why there is
//! none) is written once, by the lease's holder: a kill loses no written
//! cell and asks none again.
//!
//! Graded assertions (rubric, factuality, pairwise: lf-eval's `Grading`)
//! are asked of the experiment's judge within the cell's attempt, after
//! its answer and before its result is written, under the same lease and
//! retry rule (a malformed judge answer counts as a failed attempt of that
//! judge call); what they cost is kept on each outcome and their credits
//! added to the cell's; each judged pairwise verdict is written with the
//! result as a matchup the leaderboard rates (lf-eval's `ratings`). A
//! pairwise cell waits for its baseline's result for the same case and
//! repeat: each case's baselines are asked first,
//! so the baseline's cell already holds a slot (or has its result) when
//! its dependants wait. Written once with the result, a judgement is never
//! made twice for a written cell; a kill before the write asks the cell
//! (and its judge) again, within its attempts.
//!
//! The experiment stops asking when it is cancelled (seen within
//! [`WATCH`]) or when its cells have spent its `budget_credits`, and is
//! completed once every cell has its result. [`ExperimentCells::resume`]
//! takes up every running experiment after a restart.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lf_battle::{Claim, JsonSchemaValidator};
use lf_core::{
    Clock, LfResult, ModelResolver, PageRequest, Principal, Reach, ResolvedModel, Scopes, SystemClock,
    Timestamp,
};
use lf_eval::dataset::{Case, DatasetStore};
use lf_eval::experiment::{
    Assertion, AssertionOutcome, CELL_ATTEMPTS, CellKey, CellResult, Contender, Experiment, ExperimentId,
    ExperimentRunner, ExperimentStatus, ExperimentStore, Grading, Judged, MAX_ANSWER_CHARS, Rated,
    ResultFilter, labelled, matchups, outcomes, parse_all,
};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::Pricing;
use crate::asks::{again_after, lease_out};
use crate::experiment_contenders::{ExperimentContenders, Ready, question};

/// How often a running experiment looks whether it was cancelled.
pub const WATCH: Duration = Duration::from_millis(500);
/// How often a pairwise cell looks for its baseline's result.
const BASELINE_POLL: Duration = Duration::from_millis(100);
/// Cases read at a time.
const PAGE: u32 = 100;

/// Asks experiments' cells (see the module's docs).
#[derive(Clone)]
pub struct ExperimentCells {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn ExperimentStore>,
    datasets: Arc<dyn DatasetStore>,
    resolver: Arc<dyn ModelResolver>,
    /// What asks the contenders other than model profiles.
    kinds: Option<ExperimentContenders>,
    validator: Option<Arc<dyn JsonSchemaValidator>>,
    pricing: Pricing,
    clock: Arc<dyn Clock>,
    lease: Duration,
    /// The experiments this process is running now.
    running: Mutex<HashSet<ExperimentId>>,
}

impl ExperimentCells {
    /// Asks through `resolver`, reading cases from `datasets`, recording
    /// leases of `lease` and results in `store`; credits by `pricing`.
    pub fn new(
        store: Arc<dyn ExperimentStore>,
        datasets: Arc<dyn DatasetStore>,
        resolver: Arc<dyn ModelResolver>,
        pricing: Pricing,
        lease: Duration,
    ) -> Self {
        let inner = Inner {
            store,
            datasets,
            resolver,
            kinds: None,
            validator: None,
            pricing,
            clock: Arc::new(SystemClock),
            lease: lease.max(Duration::from_millis(300)),
            running: Mutex::default(),
        };
        Self { inner: Arc::new(inner) }
    }

    /// What checks JSON Schema assertions.
    pub fn with_validator(mut self, validator: Arc<dyn JsonSchemaValidator>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.validator = Some(validator);
        }
        self
    }

    /// What asks AI Lensers, lens versions and workflows as contenders
    /// (without it, only model profiles answer).
    pub fn with_contenders(mut self, kinds: ExperimentContenders) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.kinds = Some(kinds);
        }
        self
    }

    /// Takes up every running experiment this process is not running (left
    /// by a process that stopped) now and every [`crate::CATCH_UP`], in the
    /// background (nothing without a tokio runtime).
    pub fn resume(&self) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        let me = self.clone();
        rt.spawn(async move {
            loop {
                match me.inner.store.running().await {
                    Ok(all) => all.iter().for_each(|e| me.start(e)),
                    Err(e) => tracing::warn!(error = %e, "running experiments were not taken up"),
                }
                tokio::time::sleep(crate::CATCH_UP).await;
            }
        });
    }
}

impl ExperimentRunner for ExperimentCells {
    fn start(&self, experiment: &Experiment) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        if !self.inner.running.lock().unwrap_or_else(|p| p.into_inner()).insert(experiment.id) {
            return;
        }
        let (inner, experiment) = (self.inner.clone(), experiment.clone());
        rt.spawn(async move {
            if let Err(e) = inner.clone().run(&experiment).await {
                tracing::warn!(experiment_id = %experiment.id, error = %e, "an experiment stopped before its end; a restart takes it up");
            }
            inner.running.lock().unwrap_or_else(|p| p.into_inner()).remove(&experiment.id);
        });
    }
}

/// What one experiment's cells share.
struct Shared {
    experiment: Experiment,
    assertions: Vec<Assertion>,
    /// Each contender made ready, or why it cannot be asked.
    models: Vec<Result<Ready, String>>,
    /// The judge's model, or why it cannot be asked (none without one).
    judge: Option<Result<ResolvedModel, String>>,
    /// Each contender as the leaderboard names it ([`rated`]).
    rated: Vec<Option<Rated>>,
    spent: AtomicU64,
    /// Cancelled, or the budget spent: no further cell is claimed.
    stopped: AtomicBool,
    holder: String,
}

/// What one attempt came to.
pub(crate) enum Attempt {
    Answered {
        text: String,
        input: u64,
        output: u64,
        cost_usd: f64,
        latency_ms: u64,
    },
    /// Worth another attempt after waiting this long.
    Again(Duration, String),
    Failed(String),
}

impl Inner {
    fn until(&self) -> Timestamp {
        self.clock.now().plus_micros(self.lease.as_micros() as i64)
    }

    async fn run(self: Arc<Self>, e: &Experiment) -> LfResult<()> {
        let owner = Principal::Lenser { id: e.owner, scopes: Scopes::READ };
        let mut models = Vec::new();
        for c in &e.contenders {
            models.push(
                crate::experiment_contenders::ready(self.kinds.as_ref(), &*self.resolver, &owner, c).await,
            );
        }
        let judge = match &e.judge {
            None => None,
            Some(j) => Some(
                self.resolver
                    .resolve(&owner, "judge", j)
                    .await
                    .map_err(|err| format!("The judge's model {j} could not be used: {}", err.message())),
            ),
        };
        let spent = self.store.tallies(e.id).await?.iter().map(|t| t.credits).sum();
        let rated = rated(&e.contenders, &models);
        let shared = Arc::new(Shared {
            experiment: e.clone(),
            assertions: parse_all(&e.assertions, "assertions", self.validator.as_deref())?,
            models,
            judge,
            rated,
            spent: AtomicU64::new(spent),
            stopped: AtomicBool::new(false),
            holder: uuid::Uuid::now_v7().to_string(),
        });
        let watching = self.clone().watch(shared.clone());
        let walked = self.clone().walk(shared.clone()).await;
        watching.abort();
        walked?;
        if shared.stopped.load(Ordering::SeqCst) {
            if self.over_budget(&shared) {
                self.store.finish(e.id, ExperimentStatus::BudgetSpent, self.clock.now()).await?;
            }
            return Ok(());
        }
        let done: u64 = self.store.tallies(e.id).await?.iter().map(|t| t.cells).sum();
        if done >= e.cell_count() {
            self.store.finish(e.id, ExperimentStatus::Completed, self.clock.now()).await?;
        }
        Ok(())
    }

    fn over_budget(&self, s: &Shared) -> bool {
        s.experiment.budget_credits.is_some_and(|b| s.spent.load(Ordering::SeqCst) >= b)
    }

    /// Stops the experiment's cells once it is no longer running.
    fn watch(self: Arc<Self>, s: Arc<Shared>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(WATCH).await;
                match self.store.experiment(Reach::Everything, s.experiment.id).await {
                    Ok(Some(e)) if e.status == ExperimentStatus::Running => {}
                    Ok(_) => {
                        s.stopped.store(true, Ordering::SeqCst);
                        return;
                    }
                    Err(err) => {
                        tracing::warn!(experiment_id = %s.experiment.id, error = %err, "an experiment's status was not read")
                    }
                }
            }
        })
    }

    /// Asks every cell without a result, a page of cases at a time.
    async fn walk(self: Arc<Self>, s: Arc<Shared>) -> LfResult<()> {
        let e = &s.experiment;
        let version = self
            .datasets
            .version(Reach::Everything, e.dataset, e.dataset_version)
            .await?
            .ok_or_else(|| lf_core::LfError::internal("an experiment's dataset version is gone"))?;
        let gate = Arc::new(Semaphore::new(usize::from(e.concurrency)));
        let mut cells = JoinSet::new();
        let mut first = 1;
        'pages: while first <= e.case_count && !s.stopped.load(Ordering::SeqCst) {
            let last = (first + PAGE - 1).min(e.case_count);
            let page = PageRequest::new(Some(i64::from(PAGE)), Some(i64::from(first - 1)))?;
            let cases = self.datasets.cases(Reach::Everything, &version, page).await?;
            let done: HashSet<CellKey> = self.store.done(e.id, first, last).await?.into_iter().collect();
            for case in cases.into_iter().map(Arc::new) {
                for contender in self.order(&s, &case) {
                    for repeat in 1..=e.repeats {
                        let key = CellKey { experiment: e.id, position: case.position, contender, repeat };
                        if done.contains(&key) {
                            continue;
                        }
                        let permit = gate.clone().acquire_owned().await.expect("the gate is never closed");
                        if self.over_budget(&s) {
                            s.stopped.store(true, Ordering::SeqCst);
                        }
                        if s.stopped.load(Ordering::SeqCst) {
                            break 'pages;
                        }
                        let (me, s, case) = (self.clone(), s.clone(), case.clone());
                        cells.spawn(async move {
                            let out = me.cell(&s, key, &case).await;
                            drop(permit);
                            out
                        });
                        while let Some(joined) = cells.try_join_next() {
                            joined.map_err(lf_core::LfError::internal)??;
                        }
                    }
                }
            }
            first = last + 1;
        }
        while let Some(joined) = cells.join_next().await {
            joined.map_err(lf_core::LfError::internal)??;
        }
        Ok(())
    }

    /// Asks one cell until it has its result, another process holds it
    /// (then, once its lease ends, takes it over), or the experiment stops.
    async fn cell(&self, s: &Shared, key: CellKey, case: &Case) -> LfResult<()> {
        let mut last = None;
        loop {
            if s.stopped.load(Ordering::SeqCst) {
                return Ok(());
            }
            let n = match self
                .store
                .claim_cell(key, &s.holder, self.clock.now(), self.until(), CELL_ATTEMPTS)
                .await?
            {
                Claim::Attempt(n) => n,
                Claim::Leased { until } => {
                    lease_out(self.clock.now(), until).await;
                    continue;
                }
                Claim::Spent { attempts } => {
                    // Every attempt was made (perhaps by a process that
                    // died): the cell's result says why it has none.
                    let why = last.take().unwrap_or_else(|| "the process asking it last stopped".to_owned());
                    let error = format!("Asked {attempts} times without an answer: {why}");
                    let now = self.clock.now();
                    self.store.save_result(&failed(key, case, error, attempts, now), &s.holder, now).await?;
                    return Ok(());
                }
            };
            let outcome = self.held(key, &s.holder, self.attempt(s, key, case)).await;
            let result = match outcome {
                Attempt::Answered { text, input, output, cost_usd, latency_ms } => {
                    let mut credits = self.pricing.credits(input + output);
                    let mut outcomes = outcomes(
                        &s.assertions,
                        &self.case_assertions(case),
                        &text,
                        case.expected.as_ref(),
                        self.validator.as_deref(),
                    );
                    let Some(graded) = self.held(key, &s.holder, self.grade(s, key, case, &text)).await?
                    else {
                        return Ok(());
                    };
                    for o in graded {
                        let judged = o.judged.as_ref();
                        credits +=
                            judged.map_or(0, |j| self.pricing.credits(j.input_tokens + j.output_tokens));
                        outcomes.push(o);
                    }
                    let own = self.case_assertions(case);
                    let matchups = matchups(&s.assertions, &own, key.contender, &outcomes, &s.rated);
                    let passed = outcomes.iter().all(|o| o.passed);
                    let score = if outcomes.is_empty() {
                        1.0
                    } else {
                        outcomes.iter().map(AssertionOutcome::score).sum::<f64>() / outcomes.len() as f64
                    };
                    CellResult {
                        key,
                        tags: case.tags.clone(),
                        answer: Some(lf_core::clip(&text, MAX_ANSWER_CHARS).into_owned()),
                        outcomes,
                        passed,
                        score,
                        error: None,
                        input_tokens: input,
                        output_tokens: output,
                        cost_usd,
                        credits,
                        latency_ms,
                        attempts: n,
                        created_at: self.clock.now(),
                        matchups,
                    }
                }
                Attempt::Failed(error) => failed(key, case, error, n, self.clock.now()),
                Attempt::Again(wait, why) => {
                    tracing::info!(experiment_id = %key.experiment, position = key.position, contender = key.contender, attempt = n, error = %why, "a cell's attempt failed; it is asked again within its budget");
                    last = Some(why);
                    if n < CELL_ATTEMPTS {
                        self.held(key, &s.holder, tokio::time::sleep(wait)).await;
                    }
                    continue;
                }
            };
            // Written only while still held (or expired and not taken
            // over), and once: a takeover never writes twice.
            if self.store.save_result(&result, &s.holder, self.clock.now()).await? {
                s.spent.fetch_add(result.credits, Ordering::SeqCst);
            }
            return Ok(());
        }
    }

    /// The contenders in the order a case's cells are asked: the baselines
    /// of its pairwise assertions first.
    fn order(&self, s: &Shared, case: &Case) -> Vec<u16> {
        let own = self.case_assertions(case);
        let baselines = labelled(&s.assertions, &own).filter_map(|(_, a)| match a {
            Assertion::Pairwise { baseline } => Some(*baseline),
            _ => None,
        });
        let mut order: Vec<u16> = Vec::new();
        for c in baselines.chain(0..s.experiment.contenders.len() as u16) {
            if usize::from(c) < s.experiment.contenders.len() && !order.contains(&c) {
                order.push(c);
            }
        }
        order
    }

    /// The outcomes of the graded assertions of `key`'s `answer`, each
    /// asked of the judge (a pairwise one once its baseline's result is
    /// written; none on the baseline's own cells). `None` when the
    /// experiment stopped while waiting for a baseline: nothing is written.
    async fn grade(
        &self,
        s: &Shared,
        key: CellKey,
        case: &Case,
        answer: &str,
    ) -> LfResult<Option<Vec<AssertionOutcome>>> {
        let own = self.case_assertions(case);
        let mut out = Vec::new();
        for (from, a) in labelled(&s.assertions, &own).filter(|(_, a)| a.is_graded()) {
            let baseline = match a {
                Assertion::Pairwise { baseline } if *baseline == key.contender => continue,
                Assertion::Pairwise { baseline } => match self.baseline_answer(s, key, *baseline).await? {
                    Some(answer) => answer,
                    None => return Ok(None),
                },
                _ => None,
            };
            let failed = |reason: String, judged: Option<Judged>| AssertionOutcome {
                kind: a.kind().to_owned(),
                from: from.clone(),
                passed: false,
                reason,
                judged,
            };
            let model = match &s.judge {
                Some(Ok(m)) => m,
                Some(Err(why)) => {
                    out.push(failed(why.clone(), None));
                    continue;
                }
                None => {
                    out.push(failed("The experiment has no judge.".into(), None));
                    continue;
                }
            };
            let grading = match Grading::new(
                a,
                &question(case),
                case.expected.as_ref(),
                answer,
                baseline.as_deref(),
                model.model.as_deref(),
            ) {
                Ok(g) => g,
                Err(why) => {
                    out.push(failed(why, None));
                    continue;
                }
            };
            let mut judged = Judged::default();
            let mut scores = Vec::new();
            let mut why = None;
            for order in 0..grading.orders.len() {
                match self.ask_judge(model, &grading, order, &mut judged).await {
                    Ok(sc) => scores.push(sc),
                    Err(w) => {
                        why = Some(w);
                        break;
                    }
                }
            }
            let asked = judged.input_tokens + judged.output_tokens > 0 || !judged.model.is_empty();
            if let Some(why) = why {
                out.push(failed(format!("The judge gave no usable answer: {why}"), asked.then_some(judged)));
                continue;
            }
            let g = grading.outcome(&scores);
            judged.score = g.score;
            judged.position_consistent = g.position_consistent;
            out.push(AssertionOutcome {
                kind: a.kind().to_owned(),
                from,
                passed: g.passed,
                reason: g.reason,
                judged: Some(judged),
            });
        }
        Ok(Some(out))
    }

    /// The baseline's answer to `key`'s case and repeat, once its result is
    /// written (`Some(None)`: it has none); `None` when the experiment
    /// stopped first.
    async fn baseline_answer(
        &self,
        s: &Shared,
        key: CellKey,
        baseline: u16,
    ) -> LfResult<Option<Option<String>>> {
        let filter = ResultFilter {
            contender: Some(baseline),
            positions: Some((key.position, key.position)),
            ..ResultFilter::default()
        };
        loop {
            let page = PageRequest::new(Some(i64::from(lf_eval::experiment::MAX_REPEATS)), Some(0))?;
            let found = self.store.results(key.experiment, &filter, page).await?;
            if let Some(r) = found.items.into_iter().find(|r| r.key.repeat == key.repeat) {
                return Ok(Some(r.answer));
            }
            if s.stopped.load(Ordering::SeqCst) {
                return Ok(None);
            }
            tokio::time::sleep(BASELINE_POLL).await;
        }
    }

    /// One order of `grading` asked of the judge, by the answers' retry
    /// rule; a malformed answer counts as a failed attempt. What each call
    /// cost is added to `judged`.
    async fn ask_judge(
        &self,
        model: &ResolvedModel,
        grading: &Grading,
        order: usize,
        judged: &mut Judged,
    ) -> Result<Vec<lf_battle::judge::PassScore>, String> {
        let request = &grading.orders[order].request;
        let mut last = String::new();
        for attempt in 1..=CELL_ATTEMPTS {
            let started = Instant::now();
            match model.provider.chat(request.clone()).await {
                Ok(answer) => {
                    let elapsed = started.elapsed().as_millis() as u64;
                    let cost = model.cost(request, &answer, elapsed, lf_lens::estimate_tokens);
                    judged.input_tokens += cost.input_tokens;
                    judged.output_tokens += cost.output_tokens;
                    judged.cost_usd += cost.cost_usd;
                    judged.model = answer.model.clone();
                    match grading.read(order, &answer.text) {
                        Ok(scores) => return Ok(scores),
                        Err(why) => last = format!("its answer was not judge JSON: {why}"),
                    }
                }
                Err(e) => match again_after(&e) {
                    Some(wait) => {
                        last = e.message().to_owned();
                        if attempt < CELL_ATTEMPTS {
                            tokio::time::sleep(wait).await;
                        }
                    }
                    None => return Err(format!("the judge could not be asked: {}", e.message())),
                },
            }
        }
        Err(format!("asked {CELL_ATTEMPTS} times; {last}"))
    }

    fn case_assertions(&self, case: &Case) -> Vec<Assertion> {
        // Checked when the experiment started; one that no longer reads
        // (it cannot change: versions are immutable) is left out.
        parse_all(&case.assertions, "case.assertions", self.validator.as_deref()).unwrap_or_default()
    }

    /// Runs `work` while renewing `holder`'s lease on `key`.
    async fn held<T>(&self, key: CellKey, holder: &str, work: impl Future<Output = T>) -> T {
        let renewing = async {
            loop {
                tokio::time::sleep(self.lease / 3).await;
                if let Err(e) = self.store.renew_cell(key, holder, self.until()).await {
                    tracing::warn!(experiment_id = %key.experiment, error = %e, "a cell's lease was not renewed");
                }
            }
        };
        tokio::select! {
            out = work => out,
            () = renewing => unreachable!("renewing never ends"),
        }
    }

    /// One attempt: the contender asked the case once.
    async fn attempt(&self, s: &Shared, key: CellKey, case: &Case) -> Attempt {
        match &s.models[usize::from(key.contender)] {
            Ok(ready) => crate::experiment_contenders::attempt(ready, key, case).await,
            Err(why) => Attempt::Failed(why.clone()),
        }
    }
}

/// The result of a cell without an answer.
fn failed(key: CellKey, case: &Case, error: String, attempts: u32, now: Timestamp) -> CellResult {
    CellResult {
        key,
        tags: case.tags.clone(),
        answer: None,
        outcomes: Vec::new(),
        passed: false,
        score: 0.0,
        error: Some(error),
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        credits: 0,
        latency_ms: 0,
        attempts,
        created_at: now,
        matchups: Vec::new(),
    }
}

/// Each contender as the leaderboard names it, by index: a model profile
/// as battles name an `ai_model` contender, an AI Lenser as they name an
/// `ai_agent` one. Not rated: a model without a profile (an operator
/// endpoint), a lens sent to a profile, a workflow, or one that could not
/// be made ready.
fn rated(contenders: &[Contender], models: &[Result<Ready, String>]) -> Vec<Option<Rated>> {
    models
        .iter()
        .zip(contenders)
        .map(|(m, c)| {
            let (kind, id) = match (m.as_ref().ok()?, c) {
                (_, Contender::Lenser { lenser, .. }) => {
                    (lf_battle::ContenderType::AiAgent, lenser.as_uuid())
                }
                (Ready::Model(model, _), Contender::Model { .. }) => {
                    (lf_battle::ContenderType::AiModel, model.profile?.as_uuid())
                }
                _ => return None,
            };
            let id = lf_core::ContenderRefId::from_uuid(id);
            Some(Rated { reference: lf_battle::ContenderRef { kind, id }, name: c.key().to_owned() })
        })
        .collect()
}
