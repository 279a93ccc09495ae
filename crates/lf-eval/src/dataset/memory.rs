//! [`MemoryDatasets`]: the in-memory [`DatasetStore`].

use std::collections::HashMap;
use std::sync::RwLock;

use async_trait::async_trait;
use lf_core::{LenserId, LfError, LfResult, Page, PageRequest, Reach, Timestamp};

use super::model::{
    Case, Dataset, DatasetId, DatasetVersion, Visibility, dataset_archived, dataset_moved, dataset_not_found,
    dataset_taken,
};
use super::store::DatasetStore;

#[derive(Debug, Default)]
struct Rows {
    datasets: HashMap<DatasetId, Dataset>,
    versions: HashMap<(DatasetId, u32), DatasetVersion>,
    /// Each dataset's cases, by position (index + 1).
    cases: HashMap<DatasetId, Vec<Case>>,
}

/// Datasets in memory, for tests and embedding.
#[derive(Debug, Default)]
pub struct MemoryDatasets {
    rows: RwLock<Rows>,
}

impl MemoryDatasets {
    pub fn new() -> Self {
        Self::default()
    }
}

fn reads(reach: Reach, d: &Dataset) -> bool {
    match reach {
        Reach::Everything => true,
        Reach::Lenser(me) => d.owner == me || d.visibility != Visibility::Private,
    }
}

/// `cases` placed after `first - 1` existing ones, added in `version`.
fn placed(cases: &[Case], first: u32, version: u32) -> impl Iterator<Item = Case> + '_ {
    cases.iter().zip(first..).map(move |(c, position)| Case { position, added_in: version, ..c.clone() })
}

#[async_trait]
impl DatasetStore for MemoryDatasets {
    async fn add_dataset(&self, dataset: &Dataset, version: &DatasetVersion, cases: &[Case]) -> LfResult<()> {
        let mut rows = self.rows.write().unwrap_or_else(|e| e.into_inner());
        if rows
            .datasets
            .values()
            .any(|d| d.owner == dataset.owner && d.archived_at.is_none() && d.name == dataset.name)
        {
            return Err(dataset_taken(&dataset.name));
        }
        if rows.datasets.contains_key(&dataset.id) {
            return Err(LfError::conflict("a dataset of this id exists"));
        }
        rows.datasets.insert(dataset.id, dataset.clone());
        rows.versions.insert((dataset.id, version.version), version.clone());
        rows.cases.insert(dataset.id, placed(cases, 1, version.version).collect());
        Ok(())
    }

    async fn add_version(&self, owner: LenserId, version: &DatasetVersion, cases: &[Case]) -> LfResult<()> {
        let mut rows = self.rows.write().unwrap_or_else(|e| e.into_inner());
        let Some(d) = rows.datasets.get_mut(&version.dataset).filter(|d| d.owner == owner) else {
            return Err(dataset_not_found(&version.dataset.to_string()));
        };
        if d.archived_at.is_some() {
            return Err(dataset_archived());
        }
        if d.version + 1 != version.version {
            return Err(dataset_moved());
        }
        let first = d.case_count + 1;
        d.version = version.version;
        d.case_count = version.case_count;
        d.updated_at = version.created_at;
        rows.versions.insert((version.dataset, version.version), version.clone());
        let added: Vec<Case> = placed(cases, first, version.version).collect();
        rows.cases.entry(version.dataset).or_default().extend(added);
        Ok(())
    }

    async fn dataset(&self, reach: Reach, id: DatasetId) -> LfResult<Option<Dataset>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        Ok(rows.datasets.get(&id).filter(|d| reads(reach, d)).cloned())
    }

    async fn list_datasets(
        &self,
        reach: Reach,
        include_archived: bool,
        page: PageRequest,
    ) -> LfResult<Page<Dataset>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<&Dataset> = rows
            .datasets
            .values()
            .filter(|d| (include_archived || d.archived_at.is_none()) && reads(reach, d))
            .collect();
        all.sort_by(|a, b| (a.name.as_str(), a.id).cmp(&(b.name.as_str(), b.id)));
        let items = all.iter().skip(page.offset() as usize).take(page.limit() as usize).map(|d| (*d).clone());
        Ok(Page::new(items.collect(), all.len() as u64, page))
    }

    async fn version(&self, reach: Reach, id: DatasetId, version: u32) -> LfResult<Option<DatasetVersion>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        if !rows.datasets.get(&id).is_some_and(|d| reads(reach, d)) {
            return Ok(None);
        }
        Ok(rows.versions.get(&(id, version)).cloned())
    }

    async fn cases(&self, reach: Reach, version: &DatasetVersion, page: PageRequest) -> LfResult<Vec<Case>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        if !rows.datasets.get(&version.dataset).is_some_and(|d| reads(reach, d)) {
            return Ok(Vec::new());
        }
        let all = rows.cases.get(&version.dataset).map_or(&[][..], Vec::as_slice);
        let n = all.len().min(version.case_count as usize);
        let from = (page.offset() as usize).min(n);
        let to = (from + page.limit() as usize).min(n);
        Ok(all[from..to].to_vec())
    }

    async fn archive(&self, owner: LenserId, id: DatasetId, at: Timestamp) -> LfResult<()> {
        let mut rows = self.rows.write().unwrap_or_else(|e| e.into_inner());
        let Some(d) = rows.datasets.get_mut(&id).filter(|d| d.owner == owner) else {
            return Err(dataset_not_found(&id.to_string()));
        };
        if d.archived_at.is_some() {
            return Err(dataset_archived());
        }
        d.archived_at = Some(at);
        d.updated_at = at;
        Ok(())
    }
}
