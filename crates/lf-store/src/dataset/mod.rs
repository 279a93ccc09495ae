//! [`DatasetStore`] over either backend: the `datasets`, `dataset_versions`
//! and `dataset_cases` tables of `0031_datasets.sql` (SQLite) and
//! `0027_datasets.sql` (PostgreSQL), through the statements of `sql`, the
//! same on both. The caller's reach is in every read's `WHERE`.

mod sql;

use async_trait::async_trait;
use lf_core::{LenserId, LfResult, Page, PageRequest, Reach, Timestamp};
use lf_eval::dataset::{Case, Dataset, DatasetId, DatasetStore, DatasetVersion};

use crate::conns::{Conns, on};

/// [`DatasetStore`] over either backend.
pub(crate) struct SqlDatasetStore {
    conns: Conns,
}

impl SqlDatasetStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

#[async_trait]
impl DatasetStore for SqlDatasetStore {
    async fn add_dataset(&self, dataset: &Dataset, version: &DatasetVersion, cases: &[Case]) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::add(conn, dataset, version, cases))
    }

    async fn add_version(&self, owner: LenserId, version: &DatasetVersion, cases: &[Case]) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::add_version(conn, owner, version, cases))
    }

    async fn dataset(&self, reach: Reach, id: DatasetId) -> LfResult<Option<Dataset>> {
        on!(&self.conns, reading, |conn| sql::by_id(conn, reach, id))
    }

    async fn list_datasets(
        &self,
        reach: Reach,
        include_archived: bool,
        page: PageRequest,
    ) -> LfResult<Page<Dataset>> {
        on!(&self.conns, reading, |conn| sql::list(conn, reach, include_archived, page))
    }

    async fn version(&self, reach: Reach, id: DatasetId, version: u32) -> LfResult<Option<DatasetVersion>> {
        on!(&self.conns, reading, |conn| sql::version(conn, reach, id, version))
    }

    async fn cases(&self, reach: Reach, version: &DatasetVersion, page: PageRequest) -> LfResult<Vec<Case>> {
        on!(&self.conns, reading, |conn| sql::cases(conn, reach, version, page))
    }

    async fn archive(&self, owner: LenserId, id: DatasetId, at: Timestamp) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::archive(conn, owner, id, at))
    }
}
