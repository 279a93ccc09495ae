//! The dataset use cases, for a principal.

use std::sync::Arc;

use lf_core::{Clock, Description, ErrorCode, LfError, LfResult, Page, PageRequest, Principal, SystemClock};

use super::model::{
    Case, Dataset, DatasetId, DatasetName, DatasetVersion, MAX_CASES_PER_DATASET, Visibility,
    dataset_archived, dataset_not_found,
};
use super::parse::{CaseSource, read_cases};
use super::store::DatasetStore;

/// A dataset to create, as given.
#[derive(Clone, Debug)]
pub struct NewDataset {
    pub name: String,
    pub description: Option<String>,
    /// `private` (the default), `community` or `public`.
    pub visibility: Option<String>,
    pub cases: CaseSource,
}

/// Creates, reads, extends and archives datasets.
#[derive(Clone)]
pub struct DatasetService {
    store: Arc<dyn DatasetStore>,
    clock: Arc<dyn Clock>,
}

impl DatasetService {
    pub fn new(store: Arc<dyn DatasetStore>) -> Self {
        Self { store, clock: Arc::new(SystemClock) }
    }

    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn store(&self) -> &Arc<dyn DatasetStore> {
        &self.store
    }

    /// Saves a dataset of the caller's with its cases as version 1.
    /// MISSING_LENSER when no one would own it, INVALID_ARGUMENT for a bad
    /// field or any bad case (each listed by its place), CONFLICT for a name
    /// the caller gives another live dataset. Nothing is saved unless all of
    /// it passes.
    pub async fn create(&self, p: &Principal, new: NewDataset) -> LfResult<(Dataset, DatasetVersion)> {
        let owner = p.owner_for_create()?;
        let name = DatasetName::parse(new.name)?;
        let description = Description::parse(new.description.unwrap_or_default())?;
        let visibility = match new.visibility {
            Some(v) => Visibility::parse(v.trim())?,
            None => Visibility::Private,
        };
        let cases = read_cases(new.cases)?;
        let now = self.clock.now();
        let id = DatasetId::new();
        let version = self.version_of(p, id, 1, cases.len() as u32, now)?;
        let dataset = Dataset {
            id,
            owner,
            name,
            description,
            visibility,
            version: 1,
            case_count: version.case_count,
            created_at: now,
            updated_at: now,
            archived_at: None,
        };
        self.store.add_dataset(&dataset, &version, &cases).await?;
        Ok((dataset, version))
    }

    /// Appends cases to the caller's dataset `id` as a new version (the
    /// earlier versions stay as they were). NOT_FOUND when the caller cannot
    /// read it, FORBIDDEN when it reads but does not own it, CONFLICT when
    /// it is archived or cases were added meanwhile, INVALID_ARGUMENT for
    /// any bad case or past [`MAX_CASES_PER_DATASET`]. Nothing is saved
    /// unless every case passes.
    pub async fn add_cases(
        &self,
        p: &Principal,
        id: DatasetId,
        source: CaseSource,
    ) -> LfResult<(Dataset, DatasetVersion)> {
        let field = source.field();
        let mut dataset = self.own(p, id).await?;
        let cases = read_cases(source)?;
        let total = dataset.case_count as usize + cases.len();
        if total > MAX_CASES_PER_DATASET as usize {
            return Err(LfError::invalid_argument(format!(
                "A dataset holds at most {MAX_CASES_PER_DATASET} cases; this one has {} and you gave {}. Nothing was saved.",
                dataset.case_count,
                cases.len()
            ))
            .with_field(field));
        }
        let now = self.clock.now().max(dataset.updated_at);
        let version = self.version_of(p, id, dataset.version + 1, total as u32, now)?;
        self.store.add_version(dataset.owner, &version, &cases).await?;
        dataset.version = version.version;
        dataset.case_count = version.case_count;
        dataset.updated_at = now;
        Ok((dataset, version))
    }

    /// The datasets the caller reads (its own and everyone's that are not
    /// private), archived ones too when asked, by name.
    pub async fn list(
        &self,
        p: &Principal,
        include_archived: bool,
        page: PageRequest,
    ) -> LfResult<Page<Dataset>> {
        self.store.list_datasets(p.reach(), include_archived, page).await
    }

    /// The dataset `id`, its version `version` (the latest when `None`) and
    /// a page of that version's cases. NOT_FOUND on `dataset_id` when the
    /// caller cannot read it, on `version` when it has no such version.
    pub async fn get(
        &self,
        p: &Principal,
        id: DatasetId,
        version: Option<u32>,
        page: PageRequest,
    ) -> LfResult<(Dataset, DatasetVersion, Page<Case>)> {
        let reach = p.reach();
        let dataset =
            self.store.dataset(reach, id).await?.ok_or_else(|| dataset_not_found(&id.to_string()))?;
        let wanted = version.unwrap_or(dataset.version);
        let version = self.store.version(reach, id, wanted).await?.ok_or_else(|| {
            LfError::new(
                ErrorCode::NotFound,
                format!("This dataset has versions 1 to {}; there is no version {wanted}.", dataset.version),
            )
            .with_field("version")
        })?;
        let cases = self.store.cases(reach, &version, page).await?;
        let page = Page::new(cases, u64::from(version.case_count), page);
        Ok((dataset, version, page))
    }

    /// Archives the caller's dataset `id`: no longer listed (unless asked)
    /// nor extended; its versions stay readable, so what pinned one still
    /// reads it. CONFIRMATION_REQUIRED unless `confirm`; NOT_FOUND,
    /// FORBIDDEN and CONFLICT as for [`DatasetService::add_cases`].
    pub async fn archive(&self, p: &Principal, id: DatasetId, confirm: bool) -> LfResult<Dataset> {
        if !confirm {
            return Err(LfError::confirmation_required("Archiving a dataset"));
        }
        let mut dataset = self.own(p, id).await?;
        let now = self.clock.now().max(dataset.updated_at);
        self.store.archive(dataset.owner, id, now).await?;
        dataset.archived_at = Some(now);
        dataset.updated_at = now;
        Ok(dataset)
    }

    /// The dataset `id` for a change by `p`.
    async fn own(&self, p: &Principal, id: DatasetId) -> LfResult<Dataset> {
        let dataset =
            self.store.dataset(p.reach(), id).await?.ok_or_else(|| dataset_not_found(&id.to_string()))?;
        if !p.may_write(dataset.owner) {
            return Err(LfError::forbidden("Only its owner changes a dataset.").with_field("dataset_id"));
        }
        if dataset.archived_at.is_some() {
            return Err(dataset_archived());
        }
        Ok(dataset)
    }

    fn version_of(
        &self,
        p: &Principal,
        dataset: DatasetId,
        version: u32,
        case_count: u32,
        created_at: lf_core::Timestamp,
    ) -> LfResult<DatasetVersion> {
        let created_by = p.actor().ok_or_else(LfError::missing_lenser)?;
        Ok(DatasetVersion { dataset, version, case_count, created_at, created_by, agent: p.agent() })
    }
}
