//! Full-text search on SQLite, and the lens writes that keep its index: the
//! FTS5 table `lens_fts` (see the migrations for its layout), rewritten in
//! the same transaction as the rows it indexes, holding only readable
//! (non-deleted, non-archived) lenses, with a `scope` column so that reach
//! and counts are answered from the index. Also SQLite's insert of a
//! version's parameters, one statement each.

use lf_core::{LensId, LfError, LfResult, Page, PageRequest, Reach, VersionId};
use lf_lens::{Lens, LensPatch, LensStatus, LensVersion, SearchQuery, Visibility};
use sqlx::SqliteConnection;

use super::rows::{self, bind_lens, bind_move_head, bind_patch, lens_columns};
use super::sql::{self, patch_set};
use crate::dialect::{Bind, Columns, execute, insert, json_strings, query};
use crate::error::{conflict_or, map_db_err};
use crate::reach::owner_or_null;
use crate::sqlite::Handle;

const INSERT_LENS: &str = "INSERT INTO lenses (id, owner_id, title, description, visibility, status, \
     parent_lens_id, head_version_id, head_major, head_minor, head_patch, created_at, updated_at, archived_at, \
     agent_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING seq";
const INSERT_PARAM: &str = "INSERT INTO version_params \
     (version_id, position, id, label, optional, type_hint, description, default_value, options) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// Whether the lens row just written belongs in the full-text index.
macro_rules! searchable {
    () => {
        "deleted_at IS NULL AND status <> 'archived' AS searchable"
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

/// Writes the lens_fts row of lens `$1` (a seq) from the lens and its head
/// version: the index is derived from the stored rows, never from what a
/// caller passed in.
const FTS_PUT: &str = "INSERT OR REPLACE INTO lens_fts (rowid, title, description, body, scope) \
     SELECT l.seq, l.title, l.description, v.body, 'v' || l.visibility || ' o' || lower(hex(l.owner_id)) \
     FROM lenses l JOIN lens_versions v ON v.id = l.head_version_id WHERE l.seq = $1";
const FTS_DELETE: &str = "DELETE FROM lens_fts WHERE rowid = $1";

/// How many of a search's matches are ranked by relevance. bm25 scores
/// each match, so ranking every match of a broad query over a large
/// catalog would take longer than anyone should wait: past this many, the
/// newest matches (by insertion) are ranked and the older ones follow,
/// newest first. Up to this many matches the ranking is exact.
pub(crate) const RANK_WINDOW: u32 = lf_lens::SEARCH_RANK_WINDOW as u32;

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

pub(crate) async fn create_lens(db: &Handle, lens: &Lens, first: &LensVersion) -> LfResult<()> {
    db.write(async |conn| {
        let row = bind_lens(query(INSERT_LENS), lens)
            .fetch_one(&mut *conn)
            .await
            .map_err(conflict_or(|| LfError::conflict(format!("lens {} already exists", lens.id))))?;
        let seq: i64 = row.value(0)?;
        insert_version(conn, lens.id, first).await?;
        sync_fts(conn, seq, lens.status != LensStatus::Archived).await
    })
    .await
}

pub(crate) async fn append_version(
    db: &Handle,
    lens_id: LensId,
    expected_head: VersionId,
    version: &LensVersion,
    patch: &LensPatch,
) -> LfResult<()> {
    db.write(async |conn| {
        let moved = bind_move_head(query(MOVE_HEAD), patch, lens_id, expected_head, version)
            .fetch_optional(&mut *conn)
            .await
            .map_err(map_db_err)?;
        let Some(moved) = moved else { return Err(sql::head_moved_or_gone(conn, lens_id).await) };
        insert_version(conn, lens_id, version).await?;
        sync_fts(conn, moved.value("seq")?, moved.value("searchable")?).await
    })
    .await
}

/// Two statements when the patch changes what the index holds: the lens,
/// then its row of the index.
pub(crate) async fn update_lens(db: &Handle, lens_id: LensId, patch: &LensPatch) -> LfResult<()> {
    db.write(async |conn| {
        let row = bind_patch(query(UPDATE_LENS), patch)
            .put(lens_id.as_uuid())
            .fetch_optional(&mut *conn)
            .await
            .map_err(map_db_err)?;
        let Some(row) = row else { return Err(LfError::not_found("Lens", lens_id)) };
        // What the index holds: the text, the reach, and whether the lens is
        // there at all (deleted and archived lenses are not).
        let indexed = patch.title.is_some()
            || patch.description.is_some()
            || patch.visibility.is_some()
            || patch.status.is_some()
            || patch.deleted_at.is_some();
        if indexed {
            sync_fts(conn, row.value("seq")?, row.value("searchable")?).await?;
        }
        Ok(())
    })
    .await
}

/// Inserts version `v` of lens `lens_id` with its parameters.
async fn insert_version(conn: &mut SqliteConnection, lens_id: LensId, v: &LensVersion) -> LfResult<()> {
    sql::insert_version(conn, lens_id, v).await?;
    for (position, p) in v.params.iter().enumerate() {
        let q = query(INSERT_PARAM)
            .put(v.id.as_uuid())
            .put(position as i64)
            .put(p.id.as_uuid())
            .put(p.label.clone())
            .put(p.optional)
            .put(p.type_hint.map(|t| t.as_str().to_owned()))
            .put(p.description.clone())
            .put(p.default.clone())
            .put(json_strings(&p.options));
        insert(conn, q, || format!("parameter id {} is taken", p.id)).await?;
    }
    Ok(())
}

/// Brings lens `seq`'s row of the full-text index up to date with the lens:
/// rewritten when `searchable`, removed otherwise.
async fn sync_fts(conn: &mut SqliteConnection, seq: i64, searchable: bool) -> LfResult<()> {
    execute(conn, query(if searchable { FTS_PUT } else { FTS_DELETE }).put(seq)).await?;
    Ok(())
}

/// The lenses matching `query` that `reach` may read (of `visibility` when
/// given), ranked among the `rank_window` newest matches (see
/// [`RANK_WINDOW`]).
pub(crate) async fn search(
    db: &Handle,
    rank_window: u32,
    reach: Reach,
    query: &SearchQuery,
    visibility: Option<Visibility>,
    page: PageRequest,
) -> LfResult<Page<Lens>> {
    let window = i64::from(rank_window);
    // One read transaction: the total and the page see one snapshot.
    let (total, rows) = db
        .snapshot(async |conn| {
            let words = only_words(conn, query).await?;
            let full = fts5_match(query, &words, reach, visibility);
            let reached = reach != Reach::Everything || visibility.is_some();
            let text =
                if reached { fts5_match(query, &words, Reach::Everything, None) } else { full.clone() };
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
                return Ok((total, Vec::new()));
            }
            let end = page.offset() + u64::from(page.limit());
            // Matches older than the window are only read when the page may
            // reach past the ranked ones: all rank_window of them when
            // `floor` bounds the window, an unknown number of them when
            // `text_floor` does.
            let rest_needed = match (floor, text_floor) {
                (_, Some(t)) if floor.is_none_or(|f| t > f) => true,
                (Some(_), _) => end > u64::from(rank_window),
                (None, _) => false,
            };
            let floor = floor.max(text_floor);
            let rows = sqlx::query(if rest_needed { SEARCH_RANKED_THEN_REST } else { SEARCH_RANKED })
                .bind(full)
                .bind(text)
                .bind(floor.unwrap_or(i64::MIN))
                .bind(i64::try_from(end).unwrap_or(i64::MAX))
                .bind(owner_or_null(reach))
                .bind(visibility.map(Visibility::as_str))
                .bind(i64::from(page.limit()))
                .bind(i64::try_from(page.offset()).unwrap_or(i64::MAX))
                .fetch_all(&mut *conn)
                .await
                .map_err(map_db_err)?;
            Ok((total, rows))
        })
        .await?;
    let items = rows.iter().map(rows::lens).collect::<LfResult<Vec<_>>>()?;
    Ok(Page::new(items, total, page))
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

/// The FTS5 query of a search: every term of `q` as a quoted prefix term in
/// the text columns, all required, then the caller's reach and the visibility
/// filter as tokens of the `scope` column (see the SQLite migration).
///
/// Quoting makes every term a plain string to FTS5: no user text is ever read
/// as an operator, column filter or NEAR group, and the column filter keeps
/// terms from matching scope tokens.
///
/// `words[i]`, when given, is the one word of the index term `i` completes
/// to: that word is matched as it is, which finds the same lenses.
fn fts5_match(
    q: &SearchQuery,
    words: &[Option<String>],
    reach: Reach,
    visibility: Option<Visibility>,
) -> String {
    let mut out = String::from("{title description body} : (");
    for (i, term) in q.terms().iter().enumerate() {
        if i > 0 {
            out.push_str(" AND ");
        }
        let (text, prefix) = match words.get(i) {
            Some(Some(word)) => (word, false),
            _ => (term, true),
        };
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push_str(if prefix { "\"*" } else { "\"" });
    }
    out.push(')');
    if let Reach::Lenser(me) = reach {
        // "Not someone else's private lens" rather than "public, community
        // or mine": it costs in proportion to the private lenses, usually the
        // fewest.
        out.push_str(" NOT ({scope} : vprivate NOT {scope} : o");
        out.push_str(&me.as_uuid().simple().to_string());
        out.push(')');
    }
    if let Some(v) = visibility {
        out.push_str(" AND {scope} : v");
        out.push_str(v.as_str());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conns::Conns;
    use crate::lens::SqlLensStore;
    use lf_core::{LenserId, Timestamp};
    use lf_lens::{LensDraft, LensStore, TemplateBody, Title, build_params};
    use uuid::Uuid;

    #[test]
    fn search_terms_are_quoted_prefixes() {
        let q = SearchQuery::parse("Code-Review  \"x\" a OR b").unwrap();
        assert_eq!(
            fts5_match(&q, &[], Reach::Everything, None),
            r#"{title description body} : ("code"* AND "review"* AND "x"* AND "a"* AND "or"* AND "b"*)"#
        );
        let me = LenserId::from_uuid(Uuid::parse_str("0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d").unwrap());
        assert_eq!(
            fts5_match(
                &SearchQuery::parse("x").unwrap(),
                &[],
                Reach::Lenser(me),
                Some(Visibility::Community)
            ),
            r#"{title description body} : ("x"*) NOT ({scope} : vprivate NOT {scope} : o0190f5a27c1e7d3a9b2c5e8f1a2b3c4d) AND {scope} : vcommunity"#
        );
    }

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
        let store = SqlLensStore::with_rank_window(Conns::Sqlite(db.clone()), 3);
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

        let exact = SqlLensStore::new(Conns::Sqlite(db));
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
            SqlLensStore::new(Conns::Sqlite(db.clone())).create_lens(&l, &v).await.unwrap();
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
                    let store = SqlLensStore::with_rank_window(Conns::Sqlite(db.clone()), rank_window);
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
        let store = SqlLensStore::new(Conns::Sqlite(db.clone()));
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
