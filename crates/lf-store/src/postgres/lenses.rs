//! [`LensStore`] over PostgreSQL.
//!
//! Concurrency rests on the database: an append checks the expected head in
//! its `UPDATE … WHERE head_version_id = …`, which PostgreSQL re-evaluates
//! after any concurrent update of the row, so exactly one of two racing
//! appends wins. Full-text data lives in the `lenses` row (`body_tsv`, set with
//! each new head, and the generated `search` column), so it can never drift
//! from what it indexes.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use lf_core::{LensId, LfError, LfResult, Page, PageRequest, Reach, Timestamp, VersionId};
use lf_lens::{
    Lens, LensFilter, LensPatch, LensRun, LensStatus, LensStore, LensVersion, SearchQuery, TemplateBody,
    VersionSelector, VersionSummary, Visibility, head_moved, version_not_found,
};
use sqlx::postgres::{PgArguments, PgPool, PgRow};
use sqlx::{Postgres, QueryBuilder, Row};
use uuid::Uuid;

use crate::error::{conflict_or, map_db_err};
use crate::listing::{page_of, push_list_from, push_page};
use crate::rows::{LensRecord, json_strings, params_from_json, semver, semver_parts, tsquery};

/// The columns every lens read selects, decoded by [`lens_from_row`].
macro_rules! lens_columns {
    () => {
        "l.id, l.owner_id, l.title, l.description, l.visibility, l.status, l.parent_lens_id, \
         l.head_version_id, l.head_major, l.head_minor, l.head_patch, l.created_at, l.updated_at, \
         l.archived_at"
    };
}

/// Whether the caller may read lens `l`: `$2` is the caller's lenser id, or
/// NULL for a principal that reads everything.
macro_rules! reach_2 {
    () => {
        "($2::uuid IS NULL OR l.owner_id = $2 OR l.visibility <> 'private')"
    };
}

/// The parameters of version `v` as one JSON array (see `rows::ParamJson`),
/// so a version and its parameters load in one round trip.
macro_rules! params_json {
    () => {
        "(SELECT coalesce(json_agg(json_build_array(p.id, p.position, p.label, p.optional::int, \
         p.type_hint, p.description, p.default_value, p.options)), '[]')::text \
         FROM version_params p WHERE p.version_id = v.id)"
    };
}

/// Lens `$1` within reach `$2` and one of its versions chosen by `$join`, in
/// one query (get_lens and run_lens read both on every call). Version columns
/// are aliased where their names clash with the lens's. The LEFT JOIN tells a
/// missing lens (no row) from a missing version (a row of NULLs).
macro_rules! lens_and_version_query {
    ($join:literal) => {
        concat!(
            "SELECT ",
            lens_columns!(),
            ", v.id AS v_id, v.major, v.minor, v.patch, v.body, v.changelog, v.created_at AS v_created_at, ",
            params_json!(),
            " AS params FROM lenses l LEFT JOIN lens_versions v ON ",
            $join,
            " WHERE l.id = $1 AND l.deleted_at IS NULL AND ",
            reach_2!()
        )
    };
}

const GET_LENS: &str = concat!(
    "SELECT ",
    lens_columns!(),
    " FROM lenses l WHERE l.id = $1 AND l.deleted_at IS NULL AND ",
    reach_2!()
);
const LENS_AND_HEAD: &str = lens_and_version_query!("v.id = l.head_version_id");
const LENS_AND_VERSION_BY_ID: &str = lens_and_version_query!("v.lens_id = l.id AND v.id = $3");
const LENS_AND_VERSION_BY_SEMVER: &str =
    lens_and_version_query!("v.lens_id = l.id AND v.major = $3 AND v.minor = $4 AND v.patch = $5");
const LIST_VERSIONS: &str = concat!(
    "SELECT v.id, v.major, v.minor, v.patch, v.changelog, v.created_at, ",
    params_json!(),
    " AS params FROM lenses l JOIN lens_versions v ON v.lens_id = l.id \
     WHERE l.id = $1 AND l.deleted_at IS NULL AND ",
    reach_2!(),
    " ORDER BY v.major DESC, v.minor DESC, v.patch DESC"
);

const INSERT_LENS: &str = "INSERT INTO lenses (id, owner_id, title, description, visibility, status, \
     parent_lens_id, head_version_id, head_major, head_minor, head_patch, created_at, updated_at, archived_at, \
     body_tsv) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, \
     setweight(to_tsvector('simple', $15), 'C'))";
const INSERT_VERSION: &str = "INSERT INTO lens_versions \
     (id, lens_id, major, minor, patch, body, changelog, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
/// All parameters of version `$1` in one statement, from parallel arrays.
const INSERT_PARAMS: &str = "INSERT INTO version_params \
     (version_id, position, id, label, optional, type_hint, description, default_value, options) \
     SELECT $1, p.position, p.id, p.label, p.optional, p.type_hint, p.description, p.default_value, \
     p.options::jsonb \
     FROM UNNEST($2::int4[], $3::uuid[], $4::text[], $5::bool[], $6::text[], $7::text[], $8::text[], $9::text[]) \
     AS p (position, id, label, optional, type_hint, description, default_value, options)";
const INSERT_RUN: &str = "INSERT INTO lens_runs \
     (id, lens_id, version_id, workflow_id, lenser_id, params_used, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)";

/// A [`LensPatch`] as assignments: `$1`..`$9` bound by [`bind_patch`]; a NULL
/// (or a false flag) leaves the column as it is.
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

const UPDATE_LENS: &str =
    concat!("UPDATE lenses SET ", patch_set!(), " WHERE id = $10 AND deleted_at IS NULL");
/// Moves the head of `$10` from `$11` to `$12`; no row when the head moved or
/// the lens is gone.
const MOVE_HEAD: &str = concat!(
    "UPDATE lenses SET ",
    patch_set!(),
    ", head_version_id = $12, head_major = $13, head_minor = $14, head_patch = $15, \
     body_tsv = setweight(to_tsvector('simple', $16), 'C') \
     WHERE id = $10 AND head_version_id = $11 AND deleted_at IS NULL RETURNING id"
);
const LENS_IS_LIVE: &str = "SELECT deleted_at IS NULL FROM lenses WHERE id = $1";

/// How many of a search's matches are ranked by relevance: ts_rank reads
/// each match's whole tsvector, so ranking every match of a broad query would
/// take as long as reading the table. Past this many, the newest matches are
/// ranked and the older ones follow, newest first; up to it the ranking is
/// exact. (The same rule as the SQLite store's.)
const RANK_WINDOW: i64 = 2_000;

/// The readable matches of search `$1` (a to_tsquery text) for reach `$2` and
/// visibility `$3`, materialized once for the total and the page. `$hits` picks
/// `(id, tier)` rows from `m`.
macro_rules! search_query {
    ($hits:expr) => {
        concat!(
            "WITH q AS MATERIALIZED (SELECT to_tsquery('simple', $1) AS q), \
             m AS MATERIALIZED (SELECT l.id, l.created_at FROM lenses l, q \
             WHERE l.search @@ q.q AND l.deleted_at IS NULL AND l.status <> 'archived' \
             AND ($2::uuid IS NULL OR l.owner_id = $2 OR l.visibility <> 'private') \
             AND ($3::text IS NULL OR l.visibility = $3)), \
             hits AS (",
            $hits,
            ") SELECT ",
            lens_columns!(),
            ", (SELECT count(*) FROM m) AS total FROM hits JOIN lenses l ON l.id = hits.id, q \
             ORDER BY hits.tier, \
             CASE WHEN hits.tier = 0 THEN ts_rank('{0.1, 0.1, 0.4, 1.0}', l.search, q.q) END DESC NULLS LAST, \
             l.created_at DESC, l.id DESC LIMIT $6 OFFSET $7"
        )
    };
}
/// Tier 0, ranked: the `$4` newest matches. Weights {D, C, B, A}: body (C)
/// 1, description (B) 4, title (A) 10.
macro_rules! ranked_hits {
    () => {
        "SELECT w.id, 0 AS tier FROM (SELECT id FROM m ORDER BY created_at DESC, id DESC LIMIT $4) w"
    };
}
const SEARCH: &str = search_query!(ranked_hits!());
/// The same, then (tier 1) `$5` older matches, newest first.
const SEARCH_THEN_REST: &str = search_query!(concat!(
    ranked_hits!(),
    " UNION ALL SELECT r.id, 1 FROM (SELECT id FROM m ORDER BY created_at DESC, id DESC OFFSET $4 LIMIT $5) r"
));
/// For the rest of the transaction.
const NO_SEQSCAN: &str = "SET LOCAL enable_seqscan = off";
/// The total alone, for a page past the last match.
const SEARCH_COUNT: &str = "SELECT count(*) FROM lenses l WHERE l.search @@ to_tsquery('simple', $1) \
     AND l.deleted_at IS NULL AND l.status <> 'archived' \
     AND ($2::uuid IS NULL OR l.owner_id = $2 OR l.visibility <> 'private') \
     AND ($3::text IS NULL OR l.visibility = $3)";

type Query<'q> = sqlx::query::Query<'q, Postgres, PgArguments>;

fn reach_owner(reach: Reach) -> Option<Uuid> {
    match reach {
        Reach::Everything => None,
        Reach::Lenser(me) => Some(me.as_uuid()),
    }
}

fn datetime(t: Option<Timestamp>) -> Option<DateTime<Utc>> {
    t.map(|t| t.to_datetime())
}

fn timestamp(row: &PgRow, column: &str) -> LfResult<Timestamp> {
    row.try_get::<DateTime<Utc>, _>(column).map(Timestamp::from_datetime).map_err(map_db_err)
}

fn bind_patch<'q>(q: Query<'q>, p: &LensPatch) -> Query<'q> {
    q.bind(p.title.as_ref().map(|t| t.as_str().to_owned()))
        .bind(p.description.is_some())
        .bind(p.description.as_ref().and_then(|d| d.as_ref()).map(|d| d.as_str().to_owned()))
        .bind(p.visibility.map(Visibility::as_str))
        .bind(p.status.map(LensStatus::as_str))
        .bind(p.archived_at.is_some())
        .bind(datetime(p.archived_at.flatten()))
        .bind(datetime(p.deleted_at))
        .bind(datetime(p.updated_at))
}

fn lens_from_row(row: &PgRow) -> LfResult<Lens> {
    let record = LensRecord {
        id: row.try_get("id").map_err(map_db_err)?,
        owner: row.try_get("owner_id").map_err(map_db_err)?,
        title: row.try_get("title").map_err(map_db_err)?,
        description: row.try_get("description").map_err(map_db_err)?,
        visibility: row.try_get("visibility").map_err(map_db_err)?,
        status: row.try_get("status").map_err(map_db_err)?,
        parent: row.try_get("parent_lens_id").map_err(map_db_err)?,
        head: row.try_get("head_version_id").map_err(map_db_err)?,
        head_semver: (
            row.try_get("head_major").map_err(map_db_err)?,
            row.try_get("head_minor").map_err(map_db_err)?,
            row.try_get("head_patch").map_err(map_db_err)?,
        ),
        created_at: timestamp(row, "created_at")?,
        updated_at: timestamp(row, "updated_at")?,
        archived_at: row
            .try_get::<Option<DateTime<Utc>>, _>("archived_at")
            .map_err(map_db_err)?
            .map(Timestamp::from_datetime),
    };
    record.into_lens()
}

fn summary_from_row(row: &PgRow, id: Uuid) -> LfResult<VersionSummary> {
    Ok(VersionSummary {
        id: VersionId::from_uuid(id),
        semver: semver((
            row.try_get("major").map_err(map_db_err)?,
            row.try_get("minor").map_err(map_db_err)?,
            row.try_get("patch").map_err(map_db_err)?,
        ))?,
        changelog: row.try_get("changelog").map_err(map_db_err)?,
        created_at: timestamp(row, "created_at")?,
        params: params_from_json(row.try_get("params").map_err(map_db_err)?)?,
    })
}

/// [`LensStore`] over PostgreSQL.
pub(crate) struct PgLensStore {
    pool: PgPool,
}

impl PgLensStore {
    pub(crate) fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    async fn insert_version(tx: &mut sqlx::PgConnection, lens_id: LensId, v: &LensVersion) -> LfResult<()> {
        let (major, minor, patch) = semver_parts(v.semver);
        sqlx::query(INSERT_VERSION)
            .bind(v.id.as_uuid())
            .bind(lens_id.as_uuid())
            .bind(major)
            .bind(minor)
            .bind(patch)
            .bind(v.body.as_str().to_owned())
            .bind(v.changelog.clone())
            .bind(v.created_at.to_datetime())
            .execute(&mut *tx)
            .await
            .map_err(conflict_or(|| {
                LfError::conflict(format!(
                    "lens {lens_id} already has version {} (or version id {} is taken)",
                    v.semver, v.id
                ))
            }))?;
        if v.params.is_empty() {
            return Ok(());
        }
        let positions: Vec<i32> = (0..v.params.len()).map(|i| i as i32).collect();
        sqlx::query(INSERT_PARAMS)
            .bind(v.id.as_uuid())
            .bind(positions)
            .bind(v.params.iter().map(|p| p.id.as_uuid()).collect::<Vec<_>>())
            .bind(v.params.iter().map(|p| p.label.clone()).collect::<Vec<_>>())
            .bind(v.params.iter().map(|p| p.optional).collect::<Vec<_>>())
            .bind(v.params.iter().map(|p| p.type_hint.map(|t| t.as_str().to_owned())).collect::<Vec<_>>())
            .bind(v.params.iter().map(|p| p.description.clone()).collect::<Vec<_>>())
            .bind(v.params.iter().map(|p| p.default.clone()).collect::<Vec<_>>())
            .bind(v.params.iter().map(|p| json_strings(&p.options)).collect::<Vec<_>>())
            .execute(&mut *tx)
            .await
            .map_err(conflict_or(|| {
                LfError::conflict(format!("a parameter id of version {} is taken", v.id))
            }))?;
        Ok(())
    }
}

#[async_trait]
impl LensStore for PgLensStore {
    async fn create_lens(&self, lens: &Lens, first: &LensVersion) -> LfResult<()> {
        let mut tx = self.pool.begin().await.map_err(map_db_err)?;
        let (major, minor, patch) = semver_parts(lens.head_semver);
        sqlx::query(INSERT_LENS)
            .bind(lens.id.as_uuid())
            .bind(lens.owner.as_uuid())
            .bind(lens.title.as_str().to_owned())
            .bind(lens.description.as_ref().map(|d| d.as_str().to_owned()))
            .bind(lens.visibility.as_str())
            .bind(lens.status.as_str())
            .bind(lens.parent_lens_id.map(|p| p.as_uuid()))
            .bind(lens.head_version_id.as_uuid())
            .bind(major)
            .bind(minor)
            .bind(patch)
            .bind(lens.created_at.to_datetime())
            .bind(lens.updated_at.to_datetime())
            .bind(datetime(lens.archived_at))
            .bind(first.body.as_str().to_owned())
            .execute(&mut *tx)
            .await
            .map_err(conflict_or(|| LfError::conflict(format!("lens {} already exists", lens.id))))?;
        Self::insert_version(&mut tx, lens.id, first).await?;
        tx.commit().await.map_err(map_db_err)
    }

    async fn get_lens(&self, reach: Reach, id: LensId) -> LfResult<Lens> {
        let row = sqlx::query(GET_LENS)
            .bind(id.as_uuid())
            .bind(reach_owner(reach))
            .fetch_optional(&self.pool)
            .await
            .map_err(map_db_err)?;
        match row {
            Some(row) => lens_from_row(&row),
            None => Err(LfError::not_found("Lens", id)),
        }
    }

    async fn get_lens_and_version(
        &self,
        reach: Reach,
        id: LensId,
        which: VersionSelector,
    ) -> LfResult<(Lens, LensVersion)> {
        let q = match which {
            VersionSelector::Head => sqlx::query(LENS_AND_HEAD).bind(id.as_uuid()).bind(reach_owner(reach)),
            VersionSelector::Id(v) => sqlx::query(LENS_AND_VERSION_BY_ID)
                .bind(id.as_uuid())
                .bind(reach_owner(reach))
                .bind(v.as_uuid()),
            VersionSelector::Semver(s) => {
                let (major, minor, patch) = semver_parts(s);
                sqlx::query(LENS_AND_VERSION_BY_SEMVER)
                    .bind(id.as_uuid())
                    .bind(reach_owner(reach))
                    .bind(major)
                    .bind(minor)
                    .bind(patch)
            }
        };
        let row = q.fetch_optional(&self.pool).await.map_err(map_db_err)?;
        let Some(row) = row else { return Err(LfError::not_found("Lens", id)) };
        let lens = lens_from_row(&row)?;
        let Some(version_id) = row.try_get::<Option<Uuid>, _>("v_id").map_err(map_db_err)? else {
            return Err(version_not_found(id, which));
        };
        let version = LensVersion {
            id: VersionId::from_uuid(version_id),
            lens_id: id,
            semver: semver((
                row.try_get("major").map_err(map_db_err)?,
                row.try_get("minor").map_err(map_db_err)?,
                row.try_get("patch").map_err(map_db_err)?,
            ))?,
            body: TemplateBody::from_trusted(row.try_get("body").map_err(map_db_err)?),
            params: params_from_json(row.try_get("params").map_err(map_db_err)?)?,
            changelog: row.try_get("changelog").map_err(map_db_err)?,
            created_at: timestamp(&row, "v_created_at")?,
        };
        Ok((lens, version))
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
        let rows = sqlx::query(LIST_VERSIONS)
            .bind(lens_id.as_uuid())
            .bind(reach_owner(reach))
            .fetch_all(&self.pool)
            .await
            .map_err(map_db_err)?;
        // Every lens has a version: no rows means no readable lens.
        if rows.is_empty() {
            return Err(LfError::not_found("Lens", lens_id));
        }
        rows.iter().map(|row| summary_from_row(row, row.try_get("id").map_err(map_db_err)?)).collect()
    }

    async fn list_lenses(
        &self,
        reach: Reach,
        filter: &LensFilter,
        page: PageRequest,
    ) -> LfResult<Page<Lens>> {
        // The total rides along as an uncorrelated subquery (an InitPlan,
        // run once), so page and total share one snapshot and one round trip.
        let mut qb = QueryBuilder::<Postgres>::new(concat!("SELECT ", lens_columns!(), ", (SELECT count(*)"));
        push_list_from(&mut qb, reach, filter);
        qb.push(") AS total");
        push_list_from(&mut qb, reach, filter);
        qb.push(" ORDER BY l.created_at DESC, l.id DESC");
        push_page(&mut qb, page);
        let rows = qb.build().fetch_all(&self.pool).await.map_err(map_db_err)?;
        page_of(rows, page, lens_from_row, async || {
            let mut qb = QueryBuilder::<Postgres>::new("SELECT count(*)");
            push_list_from(&mut qb, reach, filter);
            qb.build_query_scalar::<i64>().fetch_one(&self.pool).await.map_err(map_db_err)
        })
        .await
    }

    async fn search_lenses(
        &self,
        reach: Reach,
        query: &SearchQuery,
        visibility: Option<Visibility>,
        page: PageRequest,
    ) -> LfResult<Page<Lens>> {
        let tsq = tsquery(query);
        let end = i64::try_from(page.offset() + u64::from(page.limit())).unwrap_or(i64::MAX);
        let sql = if end > RANK_WINDOW { SEARCH_THEN_REST } else { SEARCH };
        let mut tx = self.pool.begin().await.map_err(map_db_err)?;
        // The planner prices `@@` as cheap and, for a broad query, prefers
        // reading the table, which unpacks every row's tsvector: ten times
        // slower than the GIN index, whose matches need no recheck.
        sqlx::query(NO_SEQSCAN).execute(&mut *tx).await.map_err(map_db_err)?;
        let rows = sqlx::query(sql)
            .bind(tsq.clone())
            .bind(reach_owner(reach))
            .bind(visibility.map(Visibility::as_str))
            .bind(RANK_WINDOW)
            .bind(end - RANK_WINDOW)
            .bind(i64::from(page.limit()))
            .bind(i64::try_from(page.offset()).unwrap_or(i64::MAX))
            .fetch_all(&mut *tx)
            .await
            .map_err(map_db_err)?;
        let page = page_of(rows, page, lens_from_row, async || {
            sqlx::query_scalar(SEARCH_COUNT)
                .bind(tsq.clone())
                .bind(reach_owner(reach))
                .bind(visibility.map(Visibility::as_str))
                .fetch_one(&mut *tx)
                .await
                .map_err(map_db_err)
        })
        .await?;
        tx.commit().await.map_err(map_db_err)?;
        Ok(page)
    }

    async fn append_version(
        &self,
        lens_id: LensId,
        expected_head: VersionId,
        version: &LensVersion,
        patch: &LensPatch,
    ) -> LfResult<()> {
        let mut tx = self.pool.begin().await.map_err(map_db_err)?;
        let (major, minor, patch_part) = semver_parts(version.semver);
        let moved = bind_patch(sqlx::query(MOVE_HEAD), patch)
            .bind(lens_id.as_uuid())
            .bind(expected_head.as_uuid())
            .bind(version.id.as_uuid())
            .bind(major)
            .bind(minor)
            .bind(patch_part)
            .bind(version.body.as_str().to_owned())
            .fetch_optional(&mut *tx)
            .await
            .map_err(map_db_err)?;
        if moved.is_none() {
            let live: Option<bool> = sqlx::query_scalar(LENS_IS_LIVE)
                .bind(lens_id.as_uuid())
                .fetch_optional(&mut *tx)
                .await
                .map_err(map_db_err)?;
            return Err(match live {
                Some(true) => head_moved(lens_id),
                _ => LfError::not_found("Lens", lens_id),
            });
        }
        Self::insert_version(&mut tx, lens_id, version).await?;
        tx.commit().await.map_err(map_db_err)
    }

    async fn update_lens(&self, lens_id: LensId, patch: &LensPatch) -> LfResult<()> {
        // One statement, so no transaction: the generated search column
        // follows a new title or description by itself.
        let done = bind_patch(sqlx::query(UPDATE_LENS), patch)
            .bind(lens_id.as_uuid())
            .execute(&self.pool)
            .await
            .map_err(map_db_err)?;
        if done.rows_affected() == 0 {
            return Err(LfError::not_found("Lens", lens_id));
        }
        Ok(())
    }

    async fn record_run(&self, run: &LensRun) -> LfResult<()> {
        sqlx::query(INSERT_RUN)
            .bind(run.id.as_uuid())
            .bind(run.lens_id.as_uuid())
            .bind(run.version_id.as_uuid())
            .bind(run.workflow_id.as_uuid())
            .bind(run.lenser.map(|l| l.as_uuid()))
            .bind(json_strings(&run.params_used))
            .bind(run.created_at.to_datetime())
            .execute(&self.pool)
            .await
            .map_err(conflict_or(|| LfError::conflict(format!("run {} already exists", run.id))))?;
        Ok(())
    }
}
