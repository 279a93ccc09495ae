//! The statements of [`lf_lens::LensStore`] that both backends share, and
//! the code that runs them over either backend's connection. What touches
//! the full-text index (creating a lens, a new head, a change of what is
//! indexed, search) is each backend's own, in `search_sqlite` and
//! `search_postgres`; they call the pieces here.

use lf_core::{LensId, LfError, LfResult, Page, PageRequest, Reach};
use lf_lens::{
    Lens, LensFilter, LensRun, LensStatus, LensVersion, VersionSelector, VersionSummary, head_moved,
};
use sqlx::QueryBuilder;

use super::rows::{self, bind_version, lens_columns, semver_parts};
use crate::dialect::{
    Bind, Columns, Conn, Dialect, Query, Spellings, insert, json_strings, query, row_of, spelled,
};
use crate::error::map_db_err;
use crate::page::listing;
use crate::reach::BindReach;

/// Whether the caller may read lens `l`: `$2` is the caller's lenser id, or
/// NULL for a principal that reads everything.
macro_rules! reach_2 {
    (sqlite) => {
        "($2 IS NULL OR l.owner_id = $2 OR l.visibility <> 'private')"
    };
    (postgres) => {
        "($2::uuid IS NULL OR l.owner_id = $2 OR l.visibility <> 'private')"
    };
}
pub(crate) use reach_2;

/// The parameters of version `v` as one JSON array (see
/// `rows::params_from_json`), so a version and its parameters load in one
/// query.
macro_rules! params_json {
    (sqlite) => {
        "(SELECT json_group_array(json_array(hex(p.id), p.position, p.label, p.optional, p.type_hint, \
         p.description, p.default_value, json(p.options))) \
         FROM version_params p WHERE p.version_id = v.id)"
    };
    (postgres) => {
        "(SELECT coalesce(json_agg(json_build_array(p.id, p.position, p.label, p.optional::int, \
         p.type_hint, p.description, p.default_value, p.options)), '[]')::text \
         FROM version_params p WHERE p.version_id = v.id)"
    };
}

macro_rules! get_lens {
    ($b:tt) => {
        concat!(
            "SELECT ",
            lens_columns!(),
            " FROM lenses l WHERE l.id = $1 AND l.deleted_at IS NULL AND ",
            reach_2!($b)
        )
    };
}
const GET_LENS: Spellings = spelled!(get_lens);

/// A lens of reach `$2` and one of its versions chosen by `$join`, in one
/// query (get_lens and run_lens read both on every call): decoded by
/// [`rows::lens_and_version`]. Version columns are aliased where their names
/// clash with the lens's. The LEFT JOIN tells a missing lens (no row) from a
/// missing version (a row of NULLs). `$join` is what the lens is joined with
/// to find the version `v`.
macro_rules! lens_and_version {
    ($b:tt, $join:tt) => {
        concat!(
            "SELECT ",
            lens_columns!(),
            ", v.id AS v_id, v.major, v.minor, v.patch, v.body, v.changelog, v.created_at AS v_created_at, ",
            params_json!($b),
            " AS params, v.agent_id AS v_agent_id FROM lenses l LEFT JOIN ",
            $join,
            " WHERE l.id = $1 AND l.deleted_at IS NULL AND ",
            reach_2!($b)
        )
    };
}
const LENS_AND_HEAD: Spellings = spelled!(lens_and_version, "lens_versions v ON v.id = l.head_version_id");
const LENS_AND_VERSION_BY_ID: Spellings =
    spelled!(lens_and_version, "lens_versions v ON v.lens_id = l.id AND v.id = $3");
const LENS_AND_VERSION_BY_SEMVER: Spellings = spelled!(
    lens_and_version,
    "lens_versions v ON v.lens_id = l.id AND v.major = $3 AND v.minor = $4 AND v.patch = $5"
);
/// The version label `$3` points at: a missing label is a row of NULLs, as
/// a missing version is.
const LENS_AND_VERSION_BY_LABEL: Spellings = spelled!(
    lens_and_version,
    "lens_labels t ON t.lens_id = l.id AND t.label = $3 LEFT JOIN lens_versions v ON v.id = t.version_id \
     AND v.lens_id = l.id"
);

macro_rules! list_versions {
    ($b:tt) => {
        concat!(
            "SELECT v.id, v.major, v.minor, v.patch, v.changelog, v.created_at, ",
            params_json!($b),
            " AS params, v.agent_id FROM lenses l JOIN lens_versions v ON v.lens_id = l.id \
             WHERE l.id = $1 AND l.deleted_at IS NULL AND ",
            reach_2!($b),
            " ORDER BY v.major DESC, v.minor DESC, v.patch DESC"
        )
    };
}
const LIST_VERSIONS: Spellings = spelled!(list_versions);

const INSERT_VERSION: &str = "INSERT INTO lens_versions \
     (id, lens_id, major, minor, patch, body, changelog, created_at, agent_id) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

macro_rules! insert_run {
    (sqlite) => {
        "INSERT INTO lens_runs (id, lens_id, version_id, workflow_id, lenser_id, params_used, created_at, \
         agent_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    };
    (postgres) => {
        "INSERT INTO lens_runs (id, lens_id, version_id, workflow_id, lenser_id, params_used, created_at, \
         agent_id) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8)"
    };
}
const INSERT_RUN: Spellings = spelled!(insert_run);

/// A [`lf_lens::LensPatch`] as assignments: `$1`..`$9` bound by
/// [`rows::bind_patch`]; a NULL (or a false flag) leaves the column as it is.
macro_rules! patch_set {
    () => {
        "title = coalesce($1, title), \
         description = CASE WHEN $2 THEN $3 ELSE description END, \
         visibility = coalesce($4, visibility), \
         status = coalesce($5, status), \
         archived_at = CASE WHEN $6 THEN $7 ELSE archived_at END, \
         deleted_at = coalesce($8, deleted_at), \
         updated_at = coalesce($9, updated_at)"
    };
}
pub(crate) use patch_set;

const LENS_IS_LIVE: &str = "SELECT deleted_at IS NULL FROM lenses WHERE id = $1";

/// Statement `sql`, as `DB` spells it, about lens `$1` within reach `$2`.
fn of_lens<DB: Dialect>(sql: &Spellings, id: LensId, reach: Reach) -> Query<DB> {
    query(sql.of::<DB>()).put(id.as_uuid()).put_owner_or_null(reach)
}

pub(crate) async fn get_lens<C: Conn>(conn: &mut C, reach: Reach, id: LensId) -> LfResult<Lens> {
    let found = row_of(conn, of_lens(&GET_LENS, id, reach), rows::lens).await?;
    found.ok_or_else(|| LfError::not_found("Lens", id))
}

/// The `LENS_AND_*` statement of `which`: `$1` the lens, `$2` the reach,
/// then the version's id, semver parts or label.
pub(crate) fn lens_and_version_sql(which: VersionSelector) -> &'static Spellings {
    match which {
        VersionSelector::Head => &LENS_AND_HEAD,
        VersionSelector::Id(_) => &LENS_AND_VERSION_BY_ID,
        VersionSelector::Semver(_) => &LENS_AND_VERSION_BY_SEMVER,
        VersionSelector::Label(_) => &LENS_AND_VERSION_BY_LABEL,
    }
}

/// Lens `id` of reach `reach` and its version `which`, in one query; `None`
/// when there is no such lens, a VERSION_NOT_FOUND error when the lens has
/// no such version. (SQLite's store reads it on a direct reader instead:
/// `sqlite_direct::lens_and_version`.)
pub(crate) async fn lens_and_version<C: Conn>(
    conn: &mut C,
    reach: Reach,
    id: LensId,
    which: VersionSelector,
) -> LfResult<Option<(Lens, LensVersion)>> {
    let q = of_lens::<C::Database>(lens_and_version_sql(which), id, reach);
    let q = match which {
        VersionSelector::Head => q,
        VersionSelector::Id(v) => q.put(v.as_uuid()),
        VersionSelector::Semver(s) => {
            let (major, minor, patch) = semver_parts(s);
            q.put(major).put(minor).put(patch)
        }
        VersionSelector::Label(l) => q.put(l.as_str().to_owned()),
    };
    row_of(conn, q, |row| rows::lens_and_version(row, id, which)).await
}

pub(crate) async fn list_versions<C: Conn>(
    conn: &mut C,
    reach: Reach,
    lens_id: LensId,
) -> LfResult<Vec<VersionSummary>> {
    let rows = of_lens::<C::Database>(&LIST_VERSIONS, lens_id, reach)
        .fetch_all(conn.exec())
        .await
        .map_err(map_db_err)?;
    // Every lens has a version: no rows means no readable lens.
    if rows.is_empty() {
        return Err(LfError::not_found("Lens", lens_id));
    }
    rows.iter().map(rows::summary).collect()
}

/// ` AND <the caller may read l>`, nothing for a principal that reads everything.
fn push_reach<DB: Dialect>(qb: &mut QueryBuilder<DB>, reach: Reach) {
    if let Reach::Lenser(me) = reach {
        DB::push_bind(qb.push(" AND (l.owner_id = "), me.as_uuid()).push(" OR l.visibility <> 'private')");
    }
}

/// The `FROM … WHERE` of a listing. Its text depends only on which filters
/// are set, so the prepared-statement cache holds one statement per shape.
fn push_list_from<DB: Dialect>(qb: &mut QueryBuilder<DB>, reach: Reach, filter: &LensFilter) {
    qb.push(" FROM lenses l WHERE l.deleted_at IS NULL");
    if !(filter.include_archived || filter.status == Some(LensStatus::Archived)) {
        qb.push(" AND l.status <> 'archived'");
    }
    push_reach(qb, reach);
    if let Some(v) = filter.visibility {
        DB::push_bind(qb.push(" AND l.visibility = "), v.as_str().to_owned());
    }
    if let Some(s) = filter.status {
        DB::push_bind(qb.push(" AND l.status = "), s.as_str().to_owned());
    }
    if let Some(o) = filter.owner {
        DB::push_bind(qb.push(" AND l.owner_id = "), o.as_uuid());
    }
}

pub(crate) async fn list_lenses<C: Conn>(
    conn: &mut C,
    reach: Reach,
    filter: &LensFilter,
    page: PageRequest,
) -> LfResult<Page<Lens>> {
    let select = concat!("SELECT ", lens_columns!());
    let from = |qb: &mut QueryBuilder<C::Database>| push_list_from(qb, reach, filter);
    listing(conn, select, from, " ORDER BY l.created_at DESC, l.id DESC", page, rows::lens).await
}

/// Inserts version `v` of lens `lens_id`, without its parameters (each
/// backend inserts those its own way).
pub(crate) async fn insert_version<C: Conn>(conn: &mut C, lens_id: LensId, v: &LensVersion) -> LfResult<()> {
    insert(conn, bind_version(query(INSERT_VERSION), lens_id, v), || {
        format!("lens {lens_id} already has version {} (or version id {} is taken)", v.semver, v.id)
    })
    .await
}

/// The error of a head move that changed no row: CONFLICT when lens
/// `lens_id` is there (its head moved), NOT_FOUND when it is not.
pub(crate) async fn head_moved_or_gone<C: Conn>(conn: &mut C, lens_id: LensId) -> LfError {
    match row_of(conn, query(LENS_IS_LIVE).put(lens_id.as_uuid()), |row| row.value::<bool>(0)).await {
        Ok(Some(true)) => head_moved(lens_id),
        Ok(_) => LfError::not_found("Lens", lens_id),
        Err(e) => e,
    }
}

pub(crate) async fn record_run<C: Conn>(conn: &mut C, run: &LensRun) -> LfResult<()> {
    let q = query(INSERT_RUN.of::<C::Database>())
        .put(run.id.as_uuid())
        .put(run.lens_id.as_uuid())
        .put(run.version_id.as_uuid())
        .put(run.workflow_id.as_uuid())
        .put(run.lenser.map(|l| l.as_uuid()))
        .put(json_strings(&run.params_used))
        .put_time(run.created_at)
        .put(run.agent.map(|a| a.as_uuid()));
    insert(conn, q, || format!("run {} already exists", run.id)).await
}
