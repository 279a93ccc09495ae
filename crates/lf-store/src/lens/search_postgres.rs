//! Full-text search on PostgreSQL, and the lens writes that keep its index:
//! the text lives in the `lenses` row itself (`body_tsv`, set with each new
//! head, and the generated, weighted `search` column, under a partial GIN
//! index), so it can never drift from what it indexes. Also PostgreSQL's
//! insert of a version's parameters, one statement for all of them.
//!
//! Concurrency rests on the database: an append checks the expected head in
//! its `UPDATE … WHERE head_version_id = …`, which PostgreSQL re-evaluates
//! after any concurrent update of the row, so exactly one of two racing
//! appends wins.

use lf_core::{LensId, LfError, LfResult, Page, PageRequest, Reach, VersionId};
use lf_lens::{Lens, LensPatch, LensVersion, SearchQuery, Visibility};
use sqlx::postgres::{PgConnection, PgPool};

use super::rows::{self, bind_lens, bind_move_head, bind_patch, lens_columns};
use super::sql::{self, patch_set};
use crate::dialect::{Bind, execute, insert, json_strings, query};
use crate::error::map_db_err;
use crate::page::page_of;
use crate::postgres;
use crate::reach::owner_or_null;

const INSERT_LENS: &str = "INSERT INTO lenses (id, owner_id, title, description, visibility, status, \
     parent_lens_id, head_version_id, head_major, head_minor, head_patch, created_at, updated_at, archived_at, \
     agent_id, body_tsv) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
     setweight(to_tsvector('simple', $16), 'C'))";
/// All parameters of version `$1` in one statement, from parallel arrays.
const INSERT_PARAMS: &str = "INSERT INTO version_params \
     (version_id, position, id, label, optional, type_hint, description, default_value, options) \
     SELECT $1, p.position, p.id, p.label, p.optional, p.type_hint, p.description, p.default_value, \
     p.options::jsonb \
     FROM UNNEST($2::int4[], $3::uuid[], $4::text[], $5::bool[], $6::text[], $7::text[], $8::text[], $9::text[]) \
     AS p (position, id, label, optional, type_hint, description, default_value, options)";

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

/// How many of a search's matches are ranked by relevance: ts_rank reads
/// each match's whole tsvector, so ranking every match of a broad query would
/// take as long as reading the table. Past this many, the newest matches are
/// ranked and the older ones follow, newest first; up to it the ranking is
/// exact. (The same rule as the SQLite store's.)
const RANK_WINDOW: i64 = lf_lens::SEARCH_RANK_WINDOW as i64;

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

pub(crate) async fn create_lens(pool: &PgPool, lens: &Lens, first: &LensVersion) -> LfResult<()> {
    postgres::write(pool, async |conn| {
        let q = bind_lens(query(INSERT_LENS), lens).put(first.body.as_str().to_owned());
        insert(conn, q, || format!("lens {} already exists", lens.id)).await?;
        insert_version(conn, lens.id, first).await
    })
    .await
}

pub(crate) async fn append_version(
    pool: &PgPool,
    lens_id: LensId,
    expected_head: VersionId,
    version: &LensVersion,
    patch: &LensPatch,
) -> LfResult<()> {
    postgres::write(pool, async |conn| {
        let moved = bind_move_head(query(MOVE_HEAD), patch, lens_id, expected_head, version)
            .put(version.body.as_str().to_owned())
            .fetch_optional(&mut *conn)
            .await
            .map_err(map_db_err)?;
        if moved.is_none() {
            return Err(sql::head_moved_or_gone(conn, lens_id).await);
        }
        insert_version(conn, lens_id, version).await
    })
    .await
}

/// One statement, so no transaction: the generated search column follows a
/// new title or description by itself.
pub(crate) async fn update_lens(pool: &PgPool, lens_id: LensId, patch: &LensPatch) -> LfResult<()> {
    postgres::reading(pool, async |conn| {
        if execute(conn, bind_patch(query(UPDATE_LENS), patch).put(lens_id.as_uuid())).await? == 0 {
            return Err(LfError::not_found("Lens", lens_id));
        }
        Ok(())
    })
    .await
}

/// Inserts version `v` of lens `lens_id` with its parameters.
async fn insert_version(conn: &mut PgConnection, lens_id: LensId, v: &LensVersion) -> LfResult<()> {
    sql::insert_version(conn, lens_id, v).await?;
    if v.params.is_empty() {
        return Ok(());
    }
    let positions: Vec<i32> = (0..v.params.len()).map(|i| i as i32).collect();
    let q = sqlx::query(INSERT_PARAMS)
        .bind(v.id.as_uuid())
        .bind(positions)
        .bind(v.params.iter().map(|p| p.id.as_uuid()).collect::<Vec<_>>())
        .bind(v.params.iter().map(|p| p.label.clone()).collect::<Vec<_>>())
        .bind(v.params.iter().map(|p| p.optional).collect::<Vec<_>>())
        .bind(v.params.iter().map(|p| p.type_hint.map(|t| t.as_str().to_owned())).collect::<Vec<_>>())
        .bind(v.params.iter().map(|p| p.description.clone()).collect::<Vec<_>>())
        .bind(v.params.iter().map(|p| p.default.clone()).collect::<Vec<_>>())
        .bind(v.params.iter().map(|p| json_strings(&p.options)).collect::<Vec<_>>());
    insert(conn, q, || format!("a parameter id of version {} is taken", v.id)).await
}

/// The lenses matching `query` that `reach` may read (of `visibility` when
/// given), ranked among the [`RANK_WINDOW`] newest matches.
pub(crate) async fn search(
    pool: &PgPool,
    reach: Reach,
    query: &SearchQuery,
    visibility: Option<Visibility>,
    page: PageRequest,
) -> LfResult<Page<Lens>> {
    let tsq = tsquery(query);
    let end = i64::try_from(page.offset() + u64::from(page.limit())).unwrap_or(i64::MAX);
    let sql = if end > RANK_WINDOW { SEARCH_THEN_REST } else { SEARCH };
    // A transaction of its own, though it only reads: SET LOCAL lasts until
    // it ends.
    postgres::write(pool, async |tx| {
        // The planner prices `@@` as cheap and, for a broad query, prefers
        // reading the table, which unpacks every row's tsvector: far slower
        // than the GIN index, whose matches need no recheck.
        sqlx::query(NO_SEQSCAN).execute(&mut *tx).await.map_err(map_db_err)?;
        let rows = sqlx::query(sql)
            .bind(tsq.clone())
            .bind(owner_or_null(reach))
            .bind(visibility.map(Visibility::as_str))
            .bind(RANK_WINDOW)
            .bind(end - RANK_WINDOW)
            .bind(i64::from(page.limit()))
            .bind(i64::try_from(page.offset()).unwrap_or(i64::MAX))
            .fetch_all(&mut *tx)
            .await
            .map_err(map_db_err)?;
        page_of(rows, page, rows::lens, async || {
            sqlx::query_scalar(SEARCH_COUNT)
                .bind(tsq.clone())
                .bind(owner_or_null(reach))
                .bind(visibility.map(Visibility::as_str))
                .fetch_one(&mut *tx)
                .await
                .map_err(map_db_err)
        })
        .await
    })
    .await
}

/// The `to_tsquery` input of `q`: each term a quoted lexeme matched as a
/// prefix (`'term':*`), all required. Quoting makes every term a lexeme, never
/// an operator.
fn tsquery(q: &SearchQuery) -> String {
    let mut out = String::new();
    for (i, term) in q.terms().iter().enumerate() {
        if i > 0 {
            out.push_str(" & ");
        }
        out.push('\'');
        out.push_str(&term.replace('\\', "\\\\").replace('\'', "''"));
        out.push_str("':*");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_terms_are_quoted_prefix_lexemes() {
        let q = SearchQuery::parse("Code-Review  \"x\" a OR b").unwrap();
        assert_eq!(tsquery(&q), "'code':* & 'review':* & 'x':* & 'a':* & 'or':* & 'b':*");
    }
}
