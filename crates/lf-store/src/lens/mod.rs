//! [`LensStore`] over either backend: lenses, versions and parameters in
//! plain tables (`0001_lenses.sql`), through the statements of `sql`, the
//! same on both, and of `search_sqlite` / `search_postgres` where the
//! full-text index makes them differ: creating a lens, moving its head,
//! changing what the index holds, and search itself. On SQLite,
//! `get_lens_and_version` and `list_labels` read on a direct reader
//! (`sqlite_direct`) and keep their answers while the database is unchanged
//! (see `sqlite::direct`). Labels are `labels`'.

mod labels;
pub(crate) mod rows;
mod search_postgres;
mod search_sqlite;
pub(crate) mod sql;
mod sqlite_direct;

use std::sync::Arc;

use async_trait::async_trait;
use lf_core::{LensId, LfError, LfResult, Page, PageRequest, Reach, VersionId};
use lf_lens::{
    LabelChange, LabelChanged, LabelMove, LabelName, Lens, LensFilter, LensLabel, LensPatch, LensRun,
    LensStore, LensVersion, SearchQuery, VersionSelector, VersionSummary, Visibility,
};
use uuid::Uuid;

use crate::conns::{Conns, on};
use crate::reach::owner_or_null;
use crate::{postgres, sqlite};

/// What a cached lens and version is kept under: the caller's lenser id (or
/// `None` for a principal that reads everything), the lens, the version.
type LensKey = (Option<Uuid>, LensId, VersionSelector);

/// What a lens's cached labels are kept under: the caller's lenser id (or
/// `None`), the lens.
type LabelsKey = (Option<Uuid>, LensId);

/// About how many bytes a lens's labels hold (a name is inline).
fn labels_weight(labels: &Arc<Vec<LensLabel>>) -> usize {
    std::mem::size_of::<Vec<LensLabel>>() + labels.len() * std::mem::size_of::<LensLabel>()
}

/// The lenses and versions a process keeps, at most: a few thousand of the
/// usual few hundred bytes, fewer when their bodies are long.
const CACHE_BYTES: usize = 16 << 20;

/// The lenses' labels a process keeps, at most: tens of thousands of
/// lenses' few labels.
const LABELS_CACHE_BYTES: usize = 4 << 20;

/// About how many bytes of strings a lens and its version hold.
fn lens_weight(both: &Arc<(Lens, LensVersion)>) -> usize {
    let (lens, version) = &**both;
    let params: usize = version
        .params
        .iter()
        .map(|p| {
            std::mem::size_of_val(p)
                + p.label.len()
                + p.description.as_ref().map_or(0, String::len)
                + p.default.as_ref().map_or(0, String::len)
                + p.options.iter().map(|o| o.len() + std::mem::size_of::<String>()).sum::<usize>()
        })
        .sum();
    std::mem::size_of::<(Lens, LensVersion)>()
        + lens.title.as_str().len()
        + lens.description.as_ref().map_or(0, |d| d.as_str().len())
        + version.body.as_str().len()
        + version.changelog.len()
        + params
}

/// [`LensStore`] over either backend.
pub(crate) struct SqlLensStore {
    conns: Conns,
    /// SQLite: the answers of `get_lens_and_version`, while the database is
    /// unchanged.
    read_cache: sqlite::ReadCache<LensKey, Arc<(Lens, LensVersion)>>,
    /// SQLite: the answers of `list_labels`, while the database is
    /// unchanged.
    labels_cache: sqlite::ReadCache<LabelsKey, Arc<Vec<LensLabel>>>,
    /// SQLite: [`search_sqlite::RANK_WINDOW`], smaller in tests so that
    /// every search path runs on a few lenses.
    rank_window: u32,
}

impl SqlLensStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self::with_rank_window(conns, search_sqlite::RANK_WINDOW)
    }

    fn with_rank_window(conns: Conns, rank_window: u32) -> Self {
        Self {
            conns,
            read_cache: sqlite::ReadCache::new(CACHE_BYTES, lens_weight),
            labels_cache: sqlite::ReadCache::new(LABELS_CACHE_BYTES, labels_weight),
            rank_window,
        }
    }
}

#[async_trait]
impl LensStore for SqlLensStore {
    async fn create_lens(&self, lens: &Lens, first: &LensVersion) -> LfResult<()> {
        match &self.conns {
            Conns::Sqlite(db) => search_sqlite::create_lens(db, lens, first).await,
            Conns::Postgres(pool) => search_postgres::create_lens(pool, lens, first).await,
        }
    }

    async fn get_lens(&self, reach: Reach, id: LensId) -> LfResult<Lens> {
        on!(&self.conns, reading, |conn| sql::get_lens(conn, reach, id))
    }

    async fn get_lens_and_version(
        &self,
        reach: Reach,
        id: LensId,
        which: VersionSelector,
    ) -> LfResult<(Lens, LensVersion)> {
        let found = match &self.conns {
            // Every get_lens and run_lens comes here: read on this thread,
            // or kept from the last time while nothing has changed.
            Conns::Sqlite(db) => {
                let key = (owner_or_null(reach), id, which);
                let read =
                    |conn: &_| Ok(sqlite_direct::lens_and_version(conn, reach, id, which)?.map(Arc::new));
                db.direct_cached(&self.read_cache, key, read).await?.map(Arc::unwrap_or_clone)
            }
            Conns::Postgres(pool) => {
                postgres::reading(pool, async |conn| sql::lens_and_version(conn, reach, id, which).await)
                    .await?
            }
        };
        found.ok_or_else(|| LfError::not_found("Lens", id))
    }

    async fn get_version(
        &self,
        reach: Reach,
        lens_id: LensId,
        which: VersionSelector,
    ) -> LfResult<LensVersion> {
        // One query serves both: the lens columns it also reads are a few
        // bytes next to the body.
        self.get_lens_and_version(reach, lens_id, which).await.map(|(_, version)| version)
    }

    async fn list_versions(&self, reach: Reach, lens_id: LensId) -> LfResult<Vec<VersionSummary>> {
        on!(&self.conns, reading, |conn| sql::list_versions(conn, reach, lens_id))
    }

    async fn list_lenses(
        &self,
        reach: Reach,
        filter: &LensFilter,
        page: PageRequest,
    ) -> LfResult<Page<Lens>> {
        on!(&self.conns, reading, |conn| sql::list_lenses(conn, reach, filter, page))
    }

    async fn search_lenses(
        &self,
        reach: Reach,
        query: &SearchQuery,
        visibility: Option<Visibility>,
        page: PageRequest,
    ) -> LfResult<Page<Lens>> {
        match &self.conns {
            Conns::Sqlite(db) => {
                search_sqlite::search(db, self.rank_window, reach, query, visibility, page).await
            }
            Conns::Postgres(pool) => search_postgres::search(pool, reach, query, visibility, page).await,
        }
    }

    async fn append_version(
        &self,
        lens_id: LensId,
        expected_head: VersionId,
        version: &LensVersion,
        patch: &LensPatch,
    ) -> LfResult<()> {
        match &self.conns {
            Conns::Sqlite(db) => {
                search_sqlite::append_version(db, lens_id, expected_head, version, patch).await
            }
            Conns::Postgres(pool) => {
                search_postgres::append_version(pool, lens_id, expected_head, version, patch).await
            }
        }
    }

    async fn update_lens(&self, lens_id: LensId, patch: &LensPatch) -> LfResult<()> {
        match &self.conns {
            Conns::Sqlite(db) => search_sqlite::update_lens(db, lens_id, patch).await,
            Conns::Postgres(pool) => search_postgres::update_lens(pool, lens_id, patch).await,
        }
    }

    async fn record_run(&self, run: &LensRun) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::record_run(conn, run))
    }

    async fn change_label(&self, change: &LabelChange) -> LfResult<LabelChanged> {
        on!(&self.conns, write, |conn| labels::change_label(conn, change))
    }

    async fn list_labels(&self, reach: Reach, lens_id: LensId) -> LfResult<Vec<LensLabel>> {
        let found = match &self.conns {
            // get_lens shows the labels: read as get_lens_and_version is.
            Conns::Sqlite(db) => {
                let key = (owner_or_null(reach), lens_id);
                let read = |conn: &_| Ok(sqlite_direct::labels(conn, reach, lens_id)?.map(Arc::new));
                db.direct_cached(&self.labels_cache, key, read).await?.map(Arc::unwrap_or_clone)
            }
            Conns::Postgres(pool) => {
                postgres::reading(pool, async |conn| labels::list_labels(conn, reach, lens_id).await).await?
            }
        };
        found.ok_or_else(|| LfError::not_found("Lens", lens_id))
    }

    async fn label_history(
        &self,
        reach: Reach,
        lens_id: LensId,
        label: Option<LabelName>,
        page: PageRequest,
    ) -> LfResult<Page<LabelMove>> {
        on!(&self.conns, reading, |conn| labels::label_history(conn, reach, lens_id, label, page))
    }
}
