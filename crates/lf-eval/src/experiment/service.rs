//! The experiment use cases, for a principal.

use std::sync::Arc;

use lf_battle::JsonSchemaValidator;
use lf_core::{Clock, LfError, LfResult, ModelResolver, Page, PageRequest, Principal, Reach, SystemClock};

use super::assertion::{Assertion, parse_all};
use super::compare::{ContenderChange, Outcome, Pairing, compare_contender};
use super::contender::{ContenderCheck, ContenderForm};
use super::model::{
    CellResult, Contender, DEFAULT_CONCURRENCY, Experiment, ExperimentId, ExperimentStatus, MAX_CELLS,
    MAX_CONCURRENCY, MAX_CONTENDERS, MAX_REPEATS, ResultFilter, Tally, experiment_not_found, wilson,
};
use super::store::ExperimentStore;
/// Most assertions an experiment applies to every cell.
pub const MAX_ASSERTIONS: usize = 50;
/// The largest budget an experiment may be given.
pub const MAX_BUDGET_CREDITS: u64 = 1_000_000_000;

use crate::dataset::{DatasetId, DatasetStore, JsonObject, Visibility, dataset_not_found};

/// Asks an experiment's cells in the background (the runner's, given by
/// the composition root). Returns at once.
pub trait ExperimentRunner: Send + Sync {
    fn start(&self, experiment: &Experiment);
}

/// An experiment to run, as given.
#[derive(Clone, Debug, Default)]
pub struct NewExperiment {
    pub dataset: DatasetId,
    /// The version to pin; the latest when `None`.
    pub dataset_version: Option<u32>,
    /// Contenders' forms ([`ContenderForm`]): model profiles' names or
    /// ids, AI Lensers, lens versions sent to a profile, workflows.
    pub contenders: Vec<String>,
    pub assertions: Vec<JsonObject>,
    /// The model profile (name or id) grading rubric, factuality and
    /// pairwise assertions: required with them.
    pub judge: Option<String>,
    pub repeats: Option<u8>,
    pub concurrency: Option<u16>,
    pub budget_credits: Option<u64>,
    /// `private` (the default), `community` or `public`.
    pub visibility: Option<String>,
}

/// A contender's figures, as `get_experiment` shows them.
#[derive(Clone, Debug, PartialEq)]
pub struct ContenderFigures {
    pub contender: Contender,
    pub index: u16,
    pub tally: Tally,
    /// Passed over cells with a result, and its 95% Wilson interval.
    pub pass_rate: f64,
    pub interval: (f64, f64),
    pub mean_score: f64,
}

/// An experiment with its progress and figures.
#[derive(Clone, Debug, PartialEq)]
pub struct ExperimentView {
    pub experiment: Experiment,
    /// Cells with a result, of [`Experiment::cell_count`].
    pub done: u64,
    pub spent_credits: u64,
    pub contenders: Vec<ContenderFigures>,
}

/// Two experiments compared ([`ExperimentService::compare`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub a: Experiment,
    pub b: Experiment,
    pub pairing: Pairing,
    /// Positions `1..=cases_compared` (those both versions have).
    pub cases_compared: u32,
    /// Contenders in both, in a's order.
    pub contenders: Vec<ContenderChange>,
    /// Contenders of one experiment only, not compared.
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
}

/// Starts, reads and cancels experiments.
#[derive(Clone)]
pub struct ExperimentService {
    store: Arc<dyn ExperimentStore>,
    datasets: Arc<dyn DatasetStore>,
    runner: Option<Arc<dyn ExperimentRunner>>,
    resolver: Option<Arc<dyn ModelResolver>>,
    check: Option<Arc<dyn ContenderCheck>>,
    validator: Option<Arc<dyn JsonSchemaValidator>>,
    clock: Arc<dyn Clock>,
}

fn bad(field: &str, why: String) -> LfError {
    LfError::invalid_argument(format!("{why} Nothing was saved.")).with_field(field)
}

/// Whether any of `list` (named `{prefix}[i]`) is graded; INVALID_ARGUMENT
/// for a pairwise baseline that is not one of the `contenders`.
fn check_graded(list: &[Assertion], prefix: &str, contenders: usize) -> LfResult<bool> {
    for (i, a) in list.iter().enumerate() {
        if let Assertion::Pairwise { baseline } = a
            && usize::from(*baseline) >= contenders
        {
            let place = format!("{prefix}[{i}]");
            return Err(LfError::invalid_argument(format!(
                "{place}: baseline {baseline} is not a contender's index (0 to {}). Nothing was saved.",
                contenders - 1
            ))
            .with_field(&place));
        }
    }
    Ok(list.iter().any(Assertion::is_graded))
}

impl ExperimentService {
    pub fn new(store: Arc<dyn ExperimentStore>, datasets: Arc<dyn DatasetStore>) -> Self {
        Self {
            store,
            datasets,
            runner: None,
            resolver: None,
            check: None,
            validator: None,
            clock: Arc::new(SystemClock),
        }
    }

    /// What asks the cells. Without one, experiments are saved and wait.
    pub fn with_runner(mut self, runner: Arc<dyn ExperimentRunner>) -> Self {
        self.runner = Some(runner);
        self
    }

    /// What checks that contenders are model profiles the caller may use.
    pub fn with_resolver(mut self, resolver: Arc<dyn ModelResolver>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// What checks and pins the contenders other than model profiles;
    /// without one only model profiles are contenders.
    pub fn with_contender_check(mut self, check: Arc<dyn ContenderCheck>) -> Self {
        self.check = Some(check);
        self
    }

    /// What checks JSON Schema assertions.
    pub fn with_validator(mut self, validator: Arc<dyn JsonSchemaValidator>) -> Self {
        self.validator = Some(validator);
        self
    }

    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn store(&self) -> &Arc<dyn ExperimentStore> {
        &self.store
    }

    pub fn datasets(&self) -> &Arc<dyn DatasetStore> {
        &self.datasets
    }

    pub fn validator(&self) -> Option<&dyn JsonSchemaValidator> {
        self.validator.as_deref()
    }

    /// Saves an experiment of the caller's over a dataset version it reads,
    /// and hands it to the runner; returns at once. INVALID_ARGUMENT naming
    /// the field (an assertion by its place, a case's as `case N
    /// assertions[i]`), NOT_FOUND for a dataset, version or contender the
    /// caller cannot use. Nothing is saved unless all of it passes.
    pub async fn run(&self, p: &Principal, new: NewExperiment) -> LfResult<Experiment> {
        let owner = p.owner_for_create()?;
        let created_by = p.actor().ok_or_else(LfError::missing_lenser)?;
        let reach = p.reach();
        let dataset = self
            .datasets
            .dataset(reach, new.dataset)
            .await?
            .ok_or_else(|| dataset_not_found(&new.dataset.to_string()))?;
        let wanted = new.dataset_version.unwrap_or(dataset.version);
        let version = self.datasets.version(reach, dataset.id, wanted).await?.ok_or_else(|| {
            LfError::new(
                lf_core::ErrorCode::NotFound,
                format!("This dataset has versions 1 to {}; there is no version {wanted}.", dataset.version),
            )
            .with_field("dataset_version")
        })?;
        if new.contenders.is_empty() || new.contenders.len() > MAX_CONTENDERS {
            return Err(bad("contenders", format!("Give 1 to {MAX_CONTENDERS} contenders.")));
        }
        let mut contenders = Vec::new();
        for (i, c) in new.contenders.iter().enumerate() {
            let given = c.trim();
            let twice = || bad("contenders", format!("contenders[{i}] is named twice."));
            if given.is_empty() || given.chars().count() > 300 {
                return Err(bad("contenders", format!("contenders[{i}] is empty or over 300 characters.")));
            }
            let place = |e: LfError| {
                LfError::new(e.code(), format!("contenders[{i}]: {}", e.message())).with_field("contenders")
            };
            let form = ContenderForm::parse(given)
                .map_err(|why| bad("contenders", format!("contenders[{i}] {given:?}: {why}")))?;
            let contender = match (form, &self.check) {
                (ContenderForm::Model(model), _) => {
                    if let Some(r) = &self.resolver {
                        r.resolve(p, "contenders", model).await.map_err(place)?;
                    }
                    Contender::model(model)
                }
                (form, Some(check)) => check.check(p, given, form).await.map_err(place)?,
                (_, None) => {
                    return Err(bad(
                        "contenders",
                        format!("contenders[{i}]: this server runs only model profiles as contenders."),
                    ));
                }
            };
            if contenders.iter().any(|k: &Contender| k.key() == contender.key()) {
                return Err(twice());
            }
            contenders.push(contender);
        }
        if new.assertions.len() > MAX_ASSERTIONS {
            return Err(bad("assertions", format!("Give at most {MAX_ASSERTIONS} assertions.")));
        }
        let validator = self.validator.as_deref();
        let parsed = parse_all(&new.assertions, "assertions", validator)?;
        let n = contenders.len();
        let mut graded = check_graded(&parsed, "assertions", n)?;
        graded |= self.check_case_assertions(reach, &version, n).await?;
        let judge = match new.judge.as_deref().map(str::trim) {
            None => None,
            Some(j) if j.is_empty() || j.chars().count() > 200 => {
                return Err(bad("judge", "judge is a model profile's name or id.".into()));
            }
            Some(j) => {
                if let Some(r) = &self.resolver {
                    r.resolve(p, "judge", j).await?;
                }
                Some(j.to_owned())
            }
        };
        if graded && judge.is_none() {
            return Err(bad(
                "judge",
                "rubric, factuality and pairwise assertions are graded by a judge: give judge, a model profile."
                    .into(),
            ));
        }
        let repeats = new.repeats.unwrap_or(1);
        if !(1..=MAX_REPEATS).contains(&repeats) {
            return Err(bad("repeats", format!("repeats is 1 to {MAX_REPEATS}.")));
        }
        let concurrency = new.concurrency.unwrap_or(DEFAULT_CONCURRENCY);
        if !(1..=MAX_CONCURRENCY).contains(&concurrency) {
            return Err(bad("concurrency", format!("concurrency is 1 to {MAX_CONCURRENCY}.")));
        }
        if new.budget_credits.is_some_and(|b| !(1..=MAX_BUDGET_CREDITS).contains(&b)) {
            return Err(bad(
                "budget_credits",
                format!("budget_credits is 1 to {MAX_BUDGET_CREDITS} (or leave it out)."),
            ));
        }
        let visibility = match new.visibility {
            Some(v) => Visibility::parse(v.trim())?,
            None => Visibility::Private,
        };
        let now = self.clock.now();
        let experiment = Experiment {
            id: ExperimentId::new(),
            owner,
            visibility,
            dataset: dataset.id,
            dataset_version: version.version,
            case_count: version.case_count,
            contenders,
            assertions: new.assertions,
            judge,
            repeats,
            concurrency,
            budget_credits: new.budget_credits,
            status: ExperimentStatus::Running,
            created_at: now,
            updated_at: now,
            created_by,
            agent: p.agent(),
        };
        if experiment.cell_count() > MAX_CELLS {
            return Err(bad(
                "repeats",
                format!(
                    "{} cells (cases × contenders × repeats) is over the {MAX_CELLS} an experiment may have.",
                    experiment.cell_count()
                ),
            ));
        }
        self.store.add_experiment(&experiment).await?;
        if let Some(r) = &self.runner {
            r.start(&experiment);
        }
        Ok(experiment)
    }

    /// Reads every case's assertions of `version`, a page at a time:
    /// whether any is graded.
    async fn check_case_assertions(
        &self,
        reach: Reach,
        version: &crate::dataset::DatasetVersion,
        contenders: usize,
    ) -> LfResult<bool> {
        let mut graded = false;
        let mut offset = 0;
        while offset < i64::from(version.case_count) {
            let page = PageRequest::new(Some(100), Some(offset))?;
            let cases = self.datasets.cases(reach, version, page).await?;
            if cases.is_empty() {
                break;
            }
            for c in &cases {
                let place = format!("case {} assertions", c.position);
                let parsed = parse_all(&c.assertions, &place, self.validator.as_deref())?;
                graded |= check_graded(&parsed, &place, contenders)?;
            }
            offset += 100;
        }
        Ok(graded)
    }

    /// The experiment `id` with its progress and each contender's figures.
    pub async fn get(&self, p: &Principal, id: ExperimentId) -> LfResult<ExperimentView> {
        let experiment = self.readable(p, id).await?;
        let tallies = self.store.tallies(id).await?;
        let done = tallies.iter().map(|t| t.cells).sum();
        let spent_credits = tallies.iter().map(|t| t.credits).sum();
        let contenders = experiment
            .contenders
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let tally = tallies
                    .iter()
                    .find(|t| usize::from(t.contender) == i)
                    .cloned()
                    .unwrap_or(Tally { contender: i as u16, ..Tally::default() });
                let n = tally.cells.max(1) as f64;
                ContenderFigures {
                    contender: c.clone(),
                    index: i as u16,
                    pass_rate: tally.passed as f64 / n,
                    interval: wilson(tally.passed, tally.cells),
                    mean_score: tally.score_sum / n,
                    tally,
                }
            })
            .collect();
        Ok(ExperimentView { experiment, done, spent_credits, contenders })
    }

    /// The experiments on the dataset of experiment `id` (which `p` must
    /// read) that `p` reads, newest first, `id` among them: what it may be
    /// compared with.
    pub async fn on_its_dataset(
        &self,
        p: &Principal,
        id: ExperimentId,
        page: PageRequest,
    ) -> LfResult<Page<Experiment>> {
        let e = self.readable(p, id).await?;
        self.store.of_dataset(p.reach(), e.dataset, page).await
    }

    /// A page of the experiment's results that `filter` keeps.
    pub async fn results(
        &self,
        p: &Principal,
        id: ExperimentId,
        filter: &ResultFilter,
        page: PageRequest,
    ) -> LfResult<(Experiment, Page<CellResult>)> {
        let experiment = self.readable(p, id).await?;
        if let Some(c) = filter.contender
            && usize::from(c) >= experiment.contenders.len()
        {
            return Err(bad(
                "contender",
                format!("This experiment has contenders 0 to {}.", experiment.contenders.len() - 1),
            ));
        }
        let page = self.store.results(id, filter, page).await?;
        Ok((experiment, page))
    }

    /// Stops the caller's running experiment: no further cell is asked
    /// (cells being asked finish and are kept). NOT_FOUND, FORBIDDEN for
    /// another's, CONFLICT when it is no longer running.
    pub async fn cancel(&self, p: &Principal, id: ExperimentId) -> LfResult<Experiment> {
        let mut experiment = self.readable(p, id).await?;
        if !p.may_write(experiment.owner) {
            return Err(
                LfError::forbidden("Only its owner cancels an experiment.").with_field("experiment_id")
            );
        }
        let now = self.clock.now().max(experiment.updated_at);
        if !self.store.finish(id, ExperimentStatus::Cancelled, now).await? {
            return Err(LfError::conflict(format!(
                "The experiment is {} already, not running.",
                self.readable(p, id).await?.status.as_str()
            ))
            .with_field("experiment_id"));
        }
        experiment.status = ExperimentStatus::Cancelled;
        experiment.updated_at = now;
        Ok(experiment)
    }

    /// Compares experiment `b` with `a` (the earlier, usually), contender
    /// by contender: see [`super::compare`]. Both must be readable by the
    /// caller (NOT_FOUND naming `a` or `b`) and on one dataset
    /// (INVALID_ARGUMENT otherwise); versions may differ, and then only the
    /// cases both have are compared. Reads each contender's outcomes, one
    /// contender at a time; the tests (McNemar's and a paired bootstrap of
    /// [`super::BOOTSTRAP_ROUNDS`] rounds a contender) are run by `run`
    /// over what was read ([`ToCompare::compare`] each): CPU work a server
    /// runs off its async threads, as it rates the leaderboard. `run`
    /// answers one change per [`ToCompare`], in their order.
    pub async fn compare_with(
        &self,
        p: &Principal,
        a: ExperimentId,
        b: ExperimentId,
        run: impl AsyncFnOnce(Vec<ToCompare>) -> LfResult<Vec<ContenderChange>>,
    ) -> LfResult<Comparison> {
        let named = |field: &'static str, id: ExperimentId| async move {
            self.store.experiment(p.reach(), id).await?.ok_or_else(|| {
                LfError::new(lf_core::ErrorCode::NotFound, format!("No experiment {id} that you can read."))
                    .with_field(field)
            })
        };
        let (a, b) = (named("a", a).await?, named("b", b).await?);
        if a.id == b.id {
            return Err(
                LfError::invalid_argument("a and b are the same experiment: give two.").with_field("b")
            );
        }
        if a.dataset != b.dataset {
            return Err(LfError::invalid_argument(format!(
                "The experiments ran on different datasets ({} and {}): cases can only be paired within one \
                 dataset (its versions share their cases by position).",
                a.dataset, b.dataset
            ))
            .with_field("b"));
        }
        let pairing = Pairing::of(a.repeats, b.repeats);
        let cases_compared = a.case_count.min(b.case_count);
        let mut all = Vec::new();
        for (i, c) in a.contenders.iter().enumerate() {
            let Some(j) = b.contenders.iter().position(|k| k.key() == c.key()) else { continue };
            let (i, j) = (i as u16, j as u16);
            let in_a = self.store.outcomes(a.id, i, cases_compared).await?;
            let in_b = self.store.outcomes(b.id, j, cases_compared).await?;
            all.push(ToCompare { contender: c.key().to_owned(), index: (i, j), pairing, a: in_a, b: in_b });
        }
        let contenders = run(all).await?;
        let only = |x: &Experiment, y: &Experiment| -> Vec<String> {
            x.contenders
                .iter()
                .filter(|c| !y.contenders.iter().any(|k| k.key() == c.key()))
                .map(|c| c.key().to_owned())
                .collect()
        };
        let (only_in_a, only_in_b) = (only(&a, &b), only(&b, &a));
        Ok(Comparison { pairing, cases_compared, contenders, only_in_a, only_in_b, a, b })
    }

    async fn readable(&self, p: &Principal, id: ExperimentId) -> LfResult<Experiment> {
        self.store.experiment(p.reach(), id).await?.ok_or_else(|| experiment_not_found(&id.to_string()))
    }
}

/// One contender's outcomes in two experiments, read and ready to compare
/// ([`ExperimentService::compare_with`]).
#[derive(Clone, Debug)]
pub struct ToCompare {
    pub contender: String,
    /// Its index in a and in b.
    pub index: (u16, u16),
    pub pairing: Pairing,
    pub a: Vec<Outcome>,
    pub b: Vec<Outcome>,
}

impl ToCompare {
    /// The change, by [`compare_contender`] (pure CPU work).
    pub fn compare(&self) -> ContenderChange {
        compare_contender(&self.contender, self.index, self.pairing, &self.a, &self.b)
    }
}
