//! The storage contract of datasets. Implementations: [`super::MemoryDatasets`]
//! here, SQLite and PostgreSQL in lf-store. All of them run
//! [`super::contract::suite`].

use async_trait::async_trait;
use lf_core::{LenserId, LfResult, Page, PageRequest, Reach, Timestamp};

use super::model::{Case, Dataset, DatasetId, DatasetVersion};

/// Where datasets, their versions and their cases live. What a reach
/// reads: with `Reach::Lenser(me)`, `me`'s datasets and everyone's that
/// are not private (archived ones by id; in listings only when asked);
/// with `Reach::Everything`, every dataset. Visibility is part of each
/// query, cases' included.
///
/// Cases are rows keyed by dataset and position; version `n` is the first
/// `case_count` positions, so no version copies another's cases.
///
/// Errors every implementation MUST return (other failures are INTERNAL):
/// - CONFLICT from [`DatasetStore::add_dataset`] when the owner has another
///   dataset of that name not archived ([`super::dataset_taken`]).
/// - CONFLICT from [`DatasetStore::add_version`] and
///   [`DatasetStore::archive`] when the dataset is archived, or (adding)
///   its latest version is no longer the one before `version`.
/// - NOT_FOUND from [`DatasetStore::add_version`] and
///   [`DatasetStore::archive`] when the owner has no dataset of that id.
///
/// Nothing is written by a call that fails.
#[async_trait]
pub trait DatasetStore: Send + Sync {
    /// Stores a new dataset, its version 1 and its cases (positions 1 to
    /// `cases.len()`, in order), in one transaction.
    async fn add_dataset(&self, dataset: &Dataset, version: &DatasetVersion, cases: &[Case]) -> LfResult<()>;

    /// Appends `cases` to the owner's dataset as `version` (positions after
    /// the last, `added_in` that version), and makes it the latest, in one
    /// transaction.
    async fn add_version(&self, owner: LenserId, version: &DatasetVersion, cases: &[Case]) -> LfResult<()>;

    /// The dataset `id`, when `reach` reads it.
    async fn dataset(&self, reach: Reach, id: DatasetId) -> LfResult<Option<Dataset>>;

    /// The datasets `reach` reads, archived ones too when
    /// `include_archived`, by name then id: one page and the total.
    async fn list_datasets(
        &self,
        reach: Reach,
        include_archived: bool,
        page: PageRequest,
    ) -> LfResult<Page<Dataset>>;

    /// Version `version` of the dataset `id`, when `reach` reads the dataset.
    async fn version(&self, reach: Reach, id: DatasetId, version: u32) -> LfResult<Option<DatasetVersion>>;

    /// The cases of `version` on `page`, by position: positions `offset + 1`
    /// up to `offset + limit` and at most its `case_count`; none when
    /// `reach` does not read the dataset.
    async fn cases(&self, reach: Reach, version: &DatasetVersion, page: PageRequest) -> LfResult<Vec<Case>>;

    /// Archives the owner's dataset `id` at `at`.
    async fn archive(&self, owner: LenserId, id: DatasetId, at: Timestamp) -> LfResult<()>;
}
