//! [`LensStore`] over SQLite: lenses, versions and parameters in plain tables,
//! search in the FTS5 table `lens_fts` (see the migration for its layout).

use std::sync::Arc;

use async_trait::async_trait;
use lf_core::{LensId, LfError, LfResult, Page, PageRequest, Reach, Timestamp, VersionId};
use lf_lens::{
    Lens, LensFilter, LensPatch, LensRun, LensStatus, LensStore, LensVersion, SearchQuery, TemplateBody,
    VersionSelector, VersionSummary, Visibility, head_moved, version_not_found,
};
use sqlx::sqlite::{SqliteArguments, SqliteConnection, SqliteRow};
use sqlx::{Connection, QueryBuilder, Row, Sqlite};
use uuid::Uuid;

use super::direct::{Cols, first_row};
use super::{Handle, ReadCache};
use crate::error::{conflict_or, map_db_err};
use crate::listing::{page_of, push_list_from, push_page};
use crate::rows::{LensRecord, fts5_match, json_strings, params_from_json, semver, semver_parts};

/// The columns every lens read selects first, in this order: decoded by
/// position by [`lens_from_row`].
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
        "($2 IS NULL OR l.owner_id = $2 OR l.visibility <> 'private')"
    };
}

/// The parameters of version `v` as one JSON array (see `rows::ParamJson`),
/// so a version and its parameters load in one query.
macro_rules! params_json {
    () => {
        "(SELECT json_group_array(json_array(hex(p.id), p.position, p.label, p.optional, p.type_hint, \
         p.description, p.default_value, json(p.options))) \
         FROM version_params p WHERE p.version_id = v.id)"
    };
}

/// A lens of reach `$2` and one of its versions chosen by `$join`, in one
/// query (get_lens and run_lens read both on every call). Version columns are
/// aliased where their names clash with the lens's. The LEFT JOIN tells a
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

const LENS_AND_HEAD: &str = lens_and_version_query!("v.id = l.head_version_id");
const LENS_AND_VERSION_BY_ID: &str = lens_and_version_query!("v.lens_id = l.id AND v.id = $3");
const LENS_AND_VERSION_BY_SEMVER: &str =
    lens_and_version_query!("v.lens_id = l.id AND v.major = $3 AND v.minor = $4 AND v.patch = $5");

const GET_LENS: &str = concat!(
    "SELECT ",
    lens_columns!(),
    " FROM lenses l WHERE l.id = $1 AND l.deleted_at IS NULL AND ",
    reach_2!()
);
const LIST_VERSIONS: &str = concat!(
    "SELECT v.id, v.major, v.minor, v.patch, v.changelog, v.created_at, ",
    params_json!(),
    " AS params FROM lenses l JOIN lens_versions v ON v.lens_id = l.id \
     WHERE l.id = $1 AND l.deleted_at IS NULL AND ",
    reach_2!(),
    " ORDER BY v.major DESC, v.minor DESC, v.patch DESC"
);

const INSERT_LENS: &str = "INSERT INTO lenses (id, owner_id, title, description, visibility, status, \
     parent_lens_id, head_version_id, head_major, head_minor, head_patch, created_at, updated_at, archived_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING seq";
const INSERT_VERSION: &str = "INSERT INTO lens_versions \
     (id, lens_id, major, minor, patch, body, changelog, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
const INSERT_PARAM: &str = "INSERT INTO version_params \
     (version_id, position, id, label, optional, type_hint, description, default_value, options) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
const INSERT_RUN: &str = "INSERT INTO lens_runs \
     (id, lens_id, version_id, workflow_id, lenser_id, params_used, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// Whether the lens row just written belongs in the full-text index.
macro_rules! searchable {
    () => {
        "deleted_at IS NULL AND status <> 'archived' AS searchable"
    };
}

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

const UPDATE_LENS: &str = concat!(
    "UPDATE lenses SET ",
    patch_set!(),
    " WHERE id = $10 AND deleted_at IS NULL RETURNING seq, ",
    searchable!()
);
/// Moves the head of `$10` from `$11` to `$12`; no row when the head moved or
/// the lens is gone.
const MOVE_HEAD: &str = concat!(
    "UPDATE lenses SET ",
    patch_set!(),
    ", head_version_id = $12, head_major = $13, head_minor = $14, head_patch = $15 \
     WHERE id = $10 AND head_version_id = $11 AND deleted_at IS NULL RETURNING seq, ",
    searchable!()
);
const LENS_IS_LIVE: &str = "SELECT deleted_at IS NULL FROM lenses WHERE id = $1";

/// Writes the lens_fts row of lens `$1` (a seq) from the lens and its head
/// version: the index is derived from the stored rows, never from what a
/// caller passed in.
const FTS_PUT: &str = "INSERT OR REPLACE INTO lens_fts (rowid, title, description, body, scope) \
     SELECT l.seq, l.title, l.description, v.body, 'v' || l.visibility || ' o' || lower(hex(l.owner_id)) \
     FROM lenses l JOIN lens_versions v ON v.id = l.head_version_id WHERE l.seq = $1";
const FTS_DELETE: &str = "DELETE FROM lens_fts WHERE rowid = $1";

/// How many of a search's matches are ranked by relevance. bm25 costs about
/// a microsecond per match, so ranking every match of a broad query over
/// 100,000 lenses would take longer than anyone should wait: past this many,
/// the newest matches (by insertion) are ranked and the older ones follow,
/// newest first. Up to this many matches the ranking is exact.
const RANK_WINDOW: u32 = 2_000;

/// A search's total and where its ranked window starts, answered by the
/// index alone. `$1` is the FTS5 query with the caller's reach, `$2` the text
/// terms alone. `floor`: the rowid of the RANK_WINDOW-th newest match (`$3` =
/// RANK_WINDOW - 1); `text_floor`: that of the 2·RANK_WINDOW-th newest text
/// match (`$4`); each NULL when there are fewer.
///
/// Ranking scores the text matches from the higher of the two up, then drops
/// what the caller may not read: `floor` makes that the RANK_WINDOW newest
/// readable matches, `text_floor` caps the work when most text matches are
/// other people's private lenses. The reach stays out of the scored query
/// because bm25 first counts the documents of each of its terms, tens of
/// thousands for "vpublic".
const SEARCH_TOTAL: &str = "SELECT (SELECT count(*) FROM lens_fts WHERE lens_fts MATCH $1), \
     (SELECT rowid FROM lens_fts WHERE lens_fts MATCH $1 ORDER BY rowid DESC LIMIT 1 OFFSET $3), \
     (SELECT rowid FROM lens_fts WHERE lens_fts MATCH $2 ORDER BY rowid DESC LIMIT 1 OFFSET $4)";
/// The same when the query has no reach terms (`$1` = `$2`).
const SEARCH_TOTAL_UNREACHED: &str = "SELECT (SELECT count(*) FROM lens_fts WHERE lens_fts MATCH $1), \
     (SELECT rowid FROM lens_fts WHERE lens_fts MATCH $1 ORDER BY rowid DESC LIMIT 1 OFFSET $3), NULL";

/// A page of search hits. Ranked (tier 0): the text matches of `$2` from
/// rowid `$3` up, scored by bm25 (title 10, description 4, body 1; lower is
/// better); then `$rest`. Readability is checked against lenses itself
/// (reach `$5`, visibility `$6`), so the index alone is never trusted with a
/// private lens, and ties are broken by the lens's own created_at and id.
macro_rules! search_page {
    ($rest:expr) => {
        concat!(
            "SELECT ",
            lens_columns!(),
            " FROM (SELECT seq, tier, score FROM (SELECT rowid AS seq, 0 AS tier, \
             bm25(lens_fts, 10.0, 4.0, 1.0, 0.0) AS score FROM lens_fts \
             WHERE lens_fts MATCH $2 AND rowid >= $3 LIMIT -1)",
            $rest,
            ") AS hits JOIN lenses l ON l.seq = hits.seq \
             WHERE l.deleted_at IS NULL AND l.status <> 'archived' \
             AND ($5 IS NULL OR l.owner_id = $5 OR l.visibility <> 'private') \
             AND ($6 IS NULL OR l.visibility = $6) \
             ORDER BY hits.tier, hits.score, l.created_at DESC, l.id DESC LIMIT $7 OFFSET $8"
        )
    };
}
const SEARCH_RANKED: &str = search_page!("");
/// The same, followed (tier 1) by the readable matches older than the ranked
/// window, newest first, `$4` of them at most.
const SEARCH_RANKED_THEN_REST: &str = search_page!(
    " UNION ALL SELECT seq, 1, 0.0 FROM (SELECT rowid AS seq FROM lens_fts \
     WHERE lens_fts MATCH $1 AND rowid < $3 ORDER BY rowid DESC LIMIT $4)"
);

type Query<'q> = sqlx::query::Query<'q, Sqlite, SqliteArguments>;

fn reach_owner(reach: Reach) -> Option<Uuid> {
    match reach {
        Reach::Everything => None,
        Reach::Lenser(me) => Some(me.as_uuid()),
    }
}

fn micros(t: Option<Timestamp>) -> Option<i64> {
    t.map(|t| t.as_micros())
}

fn bind_patch<'q>(q: Query<'q>, p: &LensPatch) -> Query<'q> {
    q.bind(p.title.as_ref().map(|t| t.as_str().to_owned()))
        .bind(p.description.is_some())
        .bind(p.description.as_ref().and_then(|d| d.as_ref()).map(|d| d.as_str().to_owned()))
        .bind(p.visibility.map(Visibility::as_str))
        .bind(p.status.map(LensStatus::as_str))
        .bind(p.archived_at.is_some())
        .bind(micros(p.archived_at.flatten()))
        .bind(micros(p.deleted_at))
        .bind(micros(p.updated_at))
}

fn lens_from_row(row: &impl Cols) -> LfResult<Lens> {
    let record = LensRecord {
        id: row.col(0)?,
        owner: row.col(1)?,
        title: row.col(2)?,
        description: row.col(3)?,
        visibility: row.col(4)?,
        status: row.col(5)?,
        parent: row.col(6)?,
        head: row.col(7)?,
        head_semver: (row.col(8)?, row.col(9)?, row.col(10)?),
        created_at: Timestamp::from_micros(row.col(11)?),
        updated_at: Timestamp::from_micros(row.col(12)?),
        archived_at: row.col::<Option<i64>>(13)?.map(Timestamp::from_micros),
    };
    record.into_lens()
}

fn summary_from_row(row: &SqliteRow, id: Uuid) -> LfResult<VersionSummary> {
    Ok(VersionSummary {
        id: VersionId::from_uuid(id),
        semver: semver((
            row.try_get("major").map_err(map_db_err)?,
            row.try_get("minor").map_err(map_db_err)?,
            row.try_get("patch").map_err(map_db_err)?,
        ))?,
        changelog: row.try_get("changelog").map_err(map_db_err)?,
        created_at: Timestamp::from_micros(row.try_get("created_at").map_err(map_db_err)?),
        params: params_from_json(row.try_get("params").map_err(map_db_err)?)?,
    })
}

/// Lens `id` of reach `reach` and its version `which`, in one query (see
/// [`lens_and_version_query`]: the lens's columns, then the version's from
/// position 14); `None` when there is no such lens, a VERSION_NOT_FOUND
/// error when the lens has no such version.
fn lens_and_version(
    conn: &rusqlite::Connection,
    reach: Reach,
    id: LensId,
    which: VersionSelector,
) -> LfResult<Option<(Lens, LensVersion)>> {
    let (lens_id, owner) = (id.as_uuid(), reach_owner(reach));
    let (asked_id, major, minor, patch);
    let mut params: Vec<(&str, &dyn rusqlite::ToSql)> = vec![("$1", &lens_id), ("$2", &owner)];
    let sql = match which {
        VersionSelector::Head => LENS_AND_HEAD,
        VersionSelector::Id(v) => {
            asked_id = v.as_uuid();
            params.push(("$3", &asked_id));
            LENS_AND_VERSION_BY_ID
        }
        VersionSelector::Semver(s) => {
            (major, minor, patch) = semver_parts(s);
            params.extend([("$3", &major as _), ("$4", &minor as _), ("$5", &patch as _)]);
            LENS_AND_VERSION_BY_SEMVER
        }
    };
    first_row(conn, sql, params.as_slice(), |row| {
        let lens = lens_from_row(row)?;
        let Some(version_id) = row.col::<Option<Uuid>>(14)? else {
            return Err(version_not_found(id, which));
        };
        let version = LensVersion {
            id: VersionId::from_uuid(version_id),
            lens_id: id,
            semver: semver((row.col(15)?, row.col(16)?, row.col(17)?))?,
            body: TemplateBody::from_trusted(row.col(18)?),
            params: params_from_json(&row.col::<String>(21)?)?,
            changelog: row.col(19)?,
            created_at: Timestamp::from_micros(row.col(20)?),
        };
        Ok((lens, version))
    })
}

/// What a cached lens and version is kept under: the caller's lenser id (or
/// `None` for a principal that reads everything), the lens, the version.
type LensKey = (Option<Uuid>, LensId, VersionSelector);

/// The lenses and versions a process keeps, at most: a few thousand of the
/// usual few hundred bytes, fewer when their bodies are long.
const CACHE_BYTES: usize = 16 << 20;

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

/// [`LensStore`] over SQLite.
pub(crate) struct SqliteLensStore {
    db: Handle,
    /// The answers of `get_lens_and_version`, while the database is unchanged.
    read_cache: ReadCache<LensKey, Arc<(Lens, LensVersion)>>,
    /// [`RANK_WINDOW`], smaller in tests so that every search path runs on
    /// a few lenses.
    rank_window: u32,
}

impl SqliteLensStore {
    pub(crate) fn new(db: Handle) -> Self {
        Self::with_rank_window(db, RANK_WINDOW)
    }

    fn with_rank_window(db: Handle, rank_window: u32) -> Self {
        Self { db, read_cache: ReadCache::new(CACHE_BYTES, lens_weight), rank_window }
    }
}

/// For each term of `q`, the one word of the index it completes to, when
/// it is longer than the prefix indexes (4 characters) and completes to one
/// word only (see migration 0005). Terms are lowercase ASCII letters and
/// digits, which the tokenizer keeps as they are, so the word list's order
/// is theirs.
async fn only_words(conn: &mut SqliteConnection, q: &SearchQuery) -> LfResult<Vec<Option<String>>> {
    let mut words = Vec::with_capacity(q.terms().len());
    for term in q.terms() {
        if term.len() <= 4 || !term.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
            words.push(None);
            continue;
        }
        let found: Vec<String> =
            sqlx::query_scalar("SELECT term FROM lens_fts_vocab WHERE term >= $1 AND term < $2 LIMIT 2")
                .bind(term)
                .bind(format!("{term}\u{10FFFF}"))
                .fetch_all(&mut *conn)
                .await
                .map_err(map_db_err)?;
        words.push(match <[String; 1]>::try_from(found) {
            Ok([word]) => Some(word),
            Err(_) => None,
        });
    }
    Ok(words)
}

/// Brings lens `seq`'s row of the full-text index up to date with the lens:
/// rewritten when `searchable`, removed otherwise.
async fn sync_fts(conn: &mut SqliteConnection, seq: i64, searchable: bool) -> LfResult<()> {
    let sql = if searchable { FTS_PUT } else { FTS_DELETE };
    sqlx::query(sql).bind(seq).execute(conn).await.map_err(map_db_err)?;
    Ok(())
}

async fn insert_version(conn: &mut SqliteConnection, lens_id: LensId, v: &LensVersion) -> LfResult<()> {
    let (major, minor, patch) = semver_parts(v.semver);
    sqlx::query(INSERT_VERSION)
        .bind(v.id.as_uuid())
        .bind(lens_id.as_uuid())
        .bind(major)
        .bind(minor)
        .bind(patch)
        .bind(v.body.as_str().to_owned())
        .bind(v.changelog.clone())
        .bind(v.created_at.as_micros())
        .execute(&mut *conn)
        .await
        .map_err(conflict_or(|| {
            LfError::conflict(format!(
                "lens {lens_id} already has version {} (or version id {} is taken)",
                v.semver, v.id
            ))
        }))?;
    for (position, p) in v.params.iter().enumerate() {
        sqlx::query(INSERT_PARAM)
            .bind(v.id.as_uuid())
            .bind(position as i64)
            .bind(p.id.as_uuid())
            .bind(p.label.clone())
            .bind(p.optional)
            .bind(p.type_hint.map(|t| t.as_str()))
            .bind(p.description.clone())
            .bind(p.default.clone())
            .bind(json_strings(&p.options))
            .execute(&mut *conn)
            .await
            .map_err(conflict_or(|| LfError::conflict(format!("parameter id {} is taken", p.id))))?;
    }
    Ok(())
}

#[async_trait]
impl LensStore for SqliteLensStore {
    async fn create_lens(&self, lens: &Lens, first: &LensVersion) -> LfResult<()> {
        self.db
            .write(async |conn| {
                let (major, minor, patch) = semver_parts(lens.head_semver);
                let seq: i64 = sqlx::query_scalar(INSERT_LENS)
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
                    .bind(lens.created_at.as_micros())
                    .bind(lens.updated_at.as_micros())
                    .bind(micros(lens.archived_at))
                    .fetch_one(&mut *conn)
                    .await
                    .map_err(conflict_or(|| LfError::conflict(format!("lens {} already exists", lens.id))))?;
                insert_version(conn, lens.id, first).await?;
                sync_fts(conn, seq, lens.status != LensStatus::Archived).await
            })
            .await
    }

    async fn get_lens(&self, reach: Reach, id: LensId) -> LfResult<Lens> {
        let mut conn = self.db.read().await?;
        let row = sqlx::query(GET_LENS)
            .bind(id.as_uuid())
            .bind(reach_owner(reach))
            .fetch_optional(&mut *conn)
            .await
            .map_err(map_db_err)?;
        drop(conn);
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
        // Every get_lens and run_lens comes here: read on this thread, or
        // kept from the last time while nothing has changed.
        let key = (reach_owner(reach), id, which);
        let read = |conn: &_| Ok(lens_and_version(conn, reach, id, which)?.map(Arc::new));
        match self.db.direct_cached(&self.read_cache, key, read).await? {
            Some(both) => Ok(Arc::unwrap_or_clone(both)),
            None => Err(LfError::not_found("Lens", id)),
        }
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
        let mut conn = self.db.read().await?;
        let rows = sqlx::query(LIST_VERSIONS)
            .bind(lens_id.as_uuid())
            .bind(reach_owner(reach))
            .fetch_all(&mut *conn)
            .await
            .map_err(map_db_err)?;
        drop(conn);
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
        // The total rides along as an uncorrelated subquery, evaluated once,
        // so the page and its total come from one snapshot in one round trip.
        let mut qb = QueryBuilder::<Sqlite>::new(concat!("SELECT ", lens_columns!(), ", (SELECT count(*)"));
        push_list_from(&mut qb, reach, filter);
        qb.push(") AS total");
        push_list_from(&mut qb, reach, filter);
        qb.push(" ORDER BY l.created_at DESC, l.id DESC");
        push_page(&mut qb, page);
        let mut conn = self.db.read().await?;
        let rows = qb.build().fetch_all(&mut *conn).await.map_err(map_db_err)?;
        page_of(rows, page, lens_from_row, async || {
            let mut qb = QueryBuilder::<Sqlite>::new("SELECT count(*)");
            push_list_from(&mut qb, reach, filter);
            qb.build_query_scalar::<i64>().fetch_one(&mut *conn).await.map_err(map_db_err)
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
        let window = i64::from(self.rank_window);
        let mut conn = self.db.read().await?;
        // One read transaction: the total and the page see one snapshot.
        let mut conn = conn.begin().await.map_err(map_db_err)?;
        let words = only_words(&mut conn, query).await?;
        let full = fts5_match(query, &words, reach, visibility);
        let reached = reach != Reach::Everything || visibility.is_some();
        let text = if reached { fts5_match(query, &words, Reach::Everything, None) } else { full.clone() };
        let (total, floor, text_floor): (i64, Option<i64>, Option<i64>) =
            sqlx::query_as(if reached { SEARCH_TOTAL } else { SEARCH_TOTAL_UNREACHED })
                .bind(full.clone())
                .bind(text.clone())
                .bind(window - 1)
                .bind(2 * window - 1)
                .fetch_one(&mut *conn)
                .await
                .map_err(map_db_err)?;
        let total = u64::try_from(total).unwrap_or(0);
        if page.offset() >= total {
            return Ok(Page::new(Vec::new(), total, page));
        }
        let end = page.offset() + u64::from(page.limit());
        // Matches older than the window are only read when the page may
        // reach past the ranked ones: all RANK_WINDOW of them when `floor`
        // bounds the window, an unknown number of them when `text_floor` does.
        let rest_needed = match (floor, text_floor) {
            (_, Some(t)) if floor.is_none_or(|f| t > f) => true,
            (Some(_), _) => end > u64::from(self.rank_window),
            (None, _) => false,
        };
        let floor = floor.max(text_floor);
        let rows = sqlx::query(if rest_needed { SEARCH_RANKED_THEN_REST } else { SEARCH_RANKED })
            .bind(full)
            .bind(text)
            .bind(floor.unwrap_or(i64::MIN))
            .bind(i64::try_from(end).unwrap_or(i64::MAX))
            .bind(reach_owner(reach))
            .bind(visibility.map(Visibility::as_str))
            .bind(i64::from(page.limit()))
            .bind(i64::try_from(page.offset()).unwrap_or(i64::MAX))
            .fetch_all(&mut *conn)
            .await
            .map_err(map_db_err)?;
        conn.commit().await.map_err(map_db_err)?;
        let items = rows.iter().map(lens_from_row).collect::<LfResult<Vec<_>>>()?;
        Ok(Page::new(items, total, page))
    }

    async fn append_version(
        &self,
        lens_id: LensId,
        expected_head: VersionId,
        version: &LensVersion,
        patch: &LensPatch,
    ) -> LfResult<()> {
        self.db
            .write(async |conn| {
                let (major, minor, patch_part) = semver_parts(version.semver);
                let moved = bind_patch(sqlx::query(MOVE_HEAD), patch)
                    .bind(lens_id.as_uuid())
                    .bind(expected_head.as_uuid())
                    .bind(version.id.as_uuid())
                    .bind(major)
                    .bind(minor)
                    .bind(patch_part)
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(map_db_err)?;
                let Some(moved) = moved else {
                    let live: Option<bool> = sqlx::query_scalar(LENS_IS_LIVE)
                        .bind(lens_id.as_uuid())
                        .fetch_optional(&mut *conn)
                        .await
                        .map_err(map_db_err)?;
                    return Err(match live {
                        Some(true) => head_moved(lens_id),
                        _ => LfError::not_found("Lens", lens_id),
                    });
                };
                insert_version(conn, lens_id, version).await?;
                let seq: i64 = moved.try_get("seq").map_err(map_db_err)?;
                sync_fts(conn, seq, moved.try_get("searchable").map_err(map_db_err)?).await
            })
            .await
    }

    async fn update_lens(&self, lens_id: LensId, patch: &LensPatch) -> LfResult<()> {
        self.db
            .write(async |conn| {
                let row = bind_patch(sqlx::query(UPDATE_LENS), patch)
                    .bind(lens_id.as_uuid())
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(map_db_err)?;
                let Some(row) = row else { return Err(LfError::not_found("Lens", lens_id)) };
                // What the index holds: the text, the reach, and whether the
                // lens is there at all (deleted and archived lenses are not).
                let indexed = patch.title.is_some()
                    || patch.description.is_some()
                    || patch.visibility.is_some()
                    || patch.status.is_some()
                    || patch.deleted_at.is_some();
                if indexed {
                    let seq: i64 = row.try_get("seq").map_err(map_db_err)?;
                    sync_fts(conn, seq, row.try_get("searchable").map_err(map_db_err)?).await?;
                }
                Ok(())
            })
            .await
    }

    async fn record_run(&self, run: &LensRun) -> LfResult<()> {
        self.db
            .write(async |conn| {
                sqlx::query(INSERT_RUN)
                    .bind(run.id.as_uuid())
                    .bind(run.lens_id.as_uuid())
                    .bind(run.version_id.as_uuid())
                    .bind(run.workflow_id.as_uuid())
                    .bind(run.lenser.map(|l| l.as_uuid()))
                    .bind(json_strings(&run.params_used))
                    .bind(run.created_at.as_micros())
                    .execute(&mut *conn)
                    .await
                    .map_err(conflict_or(|| LfError::conflict(format!("run {} already exists", run.id))))?;
                Ok(())
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lf_core::LenserId;
    use lf_lens::{LensDraft, Title, build_params};

    fn lens(title: &str, n: i64) -> (Lens, LensVersion) {
        let body =
            TemplateBody::parse("Draw a zebra on the savanna for [[Audience]], in a calm style.").unwrap();
        let at = Timestamp::from_micros(1_750_000_000_000_000 + n);
        let params = build_params(&body, &[], &[]).unwrap();
        LensDraft::new(LenserId::new(), Title::parse(title).unwrap(), body, params).build(at)
    }

    #[tokio::test]
    async fn past_the_rank_window_older_matches_follow_newest_first() {
        let db = Handle::open("sqlite::memory:").await.unwrap();
        let store = SqliteLensStore::with_rank_window(db, 3);
        let mut ids = Vec::new();
        for (n, title) in
            ["Zebra one", "Alpha one", "Bravo one", "Delta one", "Zebra two", "Echo one"].iter().enumerate()
        {
            let (lens, version) = lens(title, n as i64);
            store.create_lens(&lens, &version).await.unwrap();
            ids.push(lens.id);
        }
        let q = SearchQuery::parse("zebra").unwrap();
        let search = async |limit, offset| {
            let page = PageRequest::new(Some(limit), Some(offset)).unwrap();
            let found = store.search_lenses(Reach::Everything, &q, None, page).await.unwrap();
            assert_eq!(found.total, 6, "the total counts every match, ranked or not");
            found.items.iter().map(|l| ids.iter().position(|id| *id == l.id).unwrap()).collect::<Vec<_>>()
        };
        // The newest three are ranked (the title match first, then ties
        // newest first); the older three follow, newest first, so the old
        // title match 0 no longer leads.
        assert_eq!(search(10, 0).await, [4, 5, 3, 2, 1, 0]);
        assert_eq!(search(2, 2).await, [3, 2], "pages cross from ranked to the rest");
        assert_eq!(search(2, 4).await, [1, 0]);
        assert_eq!(search(2, 6).await, Vec::<usize>::new());

        let exact = SqliteLensStore::new(store.db.clone());
        let all = exact.search_lenses(Reach::Everything, &q, None, PageRequest::default()).await.unwrap();
        let order: Vec<_> =
            all.items.iter().map(|l| ids.iter().position(|id| *id == l.id).unwrap()).collect();
        assert_eq!(order, [4, 0, 5, 3, 2, 1], "within the window, every match is ranked");
    }

    /// However small the ranked window (bounded by readable matches or by text
    /// matches), a search finds every readable lens exactly once across its
    /// pages, with the same total, and never one the caller may not read.
    #[tokio::test]
    async fn every_search_path_agrees_on_what_a_caller_may_find() {
        let db = Handle::open("sqlite::memory:").await.unwrap();
        let (alice, bob) = (LenserId::new(), LenserId::new());
        let mut made = Vec::new();
        for n in 0..24_i64 {
            let (mut l, v) = lens(&format!("Zebra number {n}"), n);
            l.owner = if n % 3 == 0 { alice } else { bob };
            l.visibility = Visibility::ALL[(n % 3) as usize];
            if n == 7 {
                l.status = LensStatus::Archived;
            }
            made.push(l.clone());
            SqliteLensStore::new(db.clone()).create_lens(&l, &v).await.unwrap();
        }
        let readable = |reach: Reach, vis: Option<Visibility>, l: &Lens| {
            l.status != LensStatus::Archived
                && vis.is_none_or(|v| l.visibility == v)
                && match reach {
                    Reach::Everything => true,
                    Reach::Lenser(me) => l.owner == me || l.visibility != Visibility::Private,
                }
        };
        let q = SearchQuery::parse("zebra").unwrap();
        let tunings = [RANK_WINDOW, 8, 4, 2, 1];
        for reach in
            [Reach::Everything, Reach::Lenser(alice), Reach::Lenser(bob), Reach::Lenser(LenserId::new())]
        {
            for vis in
                [None, Some(Visibility::Public), Some(Visibility::Private), Some(Visibility::Community)]
            {
                let mut expected: Vec<LensId> =
                    made.iter().filter(|l| readable(reach, vis, l)).map(|l| l.id).collect();
                expected.sort();
                let mut exact_order = None;
                for rank_window in tunings {
                    let store = SqliteLensStore::with_rank_window(db.clone(), rank_window);
                    let mut found = Vec::new();
                    for offset in (0..30).step_by(5) {
                        let page = PageRequest::new(Some(5), Some(offset)).unwrap();
                        let got = store.search_lenses(reach, &q, vis, page).await.unwrap();
                        assert_eq!(got.total, expected.len() as u64, "{reach:?} {vis:?} {rank_window}");
                        found.extend(got.items.iter().map(|l| l.id));
                    }
                    if rank_window as usize >= expected.len() * 2 {
                        // Unwindowed, every tuning gives one exact order.
                        let order = exact_order.get_or_insert_with(|| found.clone());
                        assert_eq!(*order, found, "{reach:?} {vis:?} {rank_window}");
                    }
                    found.sort();
                    assert_eq!(found, expected, "{reach:?} {vis:?} {rank_window}: every readable match once");
                }
            }
        }
    }

    /// A term longer than the prefix indexes that completes to one word is
    /// searched as that word, and finds what the prefix finds: the lenses
    /// with a word that starts with it.
    #[tokio::test]
    async fn a_long_prefix_finds_the_lenses_whose_words_start_with_it() {
        let db = Handle::open("sqlite::memory:").await.unwrap();
        let store = SqliteLensStore::new(db.clone());
        let titles = ["Expert advice", "Expertise matters", "Exporter tool", "Plain title 2024"];
        let mut made = Vec::new();
        for (n, title) in titles.iter().enumerate() {
            let (lens, version) = lens(title, n as i64);
            store.create_lens(&lens, &version).await.unwrap();
            made.push(lens);
        }
        let cases: [(&str, Option<&str>, &[usize]); 9] = [
            ("expert", None, &[0, 1]),
            ("experti", Some("expertise"), &[1]),
            ("exporte", Some("exporter"), &[2]),
            ("expor", Some("exporter"), &[2]),
            ("exp", None, &[0, 1, 2]),
            ("zebra", Some("zebra"), &[0, 1, 2, 3]),
            ("zzzzzz", None, &[]),
            ("expert advic", None, &[0]),
            ("2024", None, &[3]),
        ];
        for (text, word, expected) in cases {
            let q = SearchQuery::parse(text).unwrap();
            let mut conn = db.read().await.unwrap();
            let words = only_words(&mut conn, &q).await.unwrap();
            drop(conn);
            assert_eq!(words[0].as_deref(), word, "{text}");
            let found =
                store.search_lenses(Reach::Everything, &q, None, PageRequest::default()).await.unwrap();
            let mut found: Vec<LensId> = found.items.iter().map(|l| l.id).collect();
            found.sort();
            let mut expected: Vec<LensId> = expected.iter().map(|i| made[*i].id).collect();
            expected.sort();
            assert_eq!(found, expected, "{text}");
        }
    }
}
