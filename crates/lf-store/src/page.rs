//! What every listing shares: one statement for a page and its total, the
//! bounds of a page, reading a page back with its total, and the words of
//! a plain search.

use lf_core::{LfResult, Page, PageRequest, SearchQuery};
use sqlx::{Database, QueryBuilder};

use crate::dialect::{Columns, Conn, Dialect};
use crate::error::map_db_err;

/// A page of a listing and its total, in one statement: `{select}, (SELECT
/// count(*) {from}) AS total {from}{order} LIMIT … OFFSET …`, each row read
/// by `from_row`. `from` pushes the listing's `FROM … WHERE`: its text
/// depends only on which filters are set, so each backend's statement cache
/// holds one statement per shape.
///
/// The total rides along as an uncorrelated subquery, evaluated once (on
/// PostgreSQL an InitPlan), so the page and its total come from one
/// snapshot in one round trip. Only a page past the end, which has no row
/// to carry it, counts again.
pub(crate) async fn listing<C: Conn, T>(
    conn: &mut C,
    select: &'static str,
    from: impl Fn(&mut QueryBuilder<C::Database>),
    order: &'static str,
    page: PageRequest,
    from_row: fn(&<C::Database as Database>::Row) -> LfResult<T>,
) -> LfResult<Page<T>> {
    let mut qb = QueryBuilder::<C::Database>::new(select);
    qb.push(", (SELECT count(*)");
    from(&mut qb);
    qb.push(") AS total");
    from(&mut qb);
    qb.push(order);
    push_page(&mut qb, page);
    let rows = qb.build().fetch_all(conn.exec()).await.map_err(map_db_err)?;
    page_of(rows, page, from_row, async || {
        let mut qb = QueryBuilder::<C::Database>::new("SELECT count(*)");
        from(&mut qb);
        qb.build().fetch_one(conn.exec()).await.map_err(map_db_err)?.value::<i64>(0)
    })
    .await
}

/// ` AND (lower(a) LIKE … OR lower(b) LIKE …)` for each term of `words`,
/// with `[a, b]` the columns `in_either`: a plain search (battles,
/// workflows) finds the rows that hold every term in one column or the
/// other. A term is lowercase letters and digits only: no LIKE wildcard or
/// escape character can be in it. A NULL column matches nothing.
pub(crate) fn push_words<DB: Dialect>(qb: &mut QueryBuilder<DB>, words: &SearchQuery, in_either: [&str; 2]) {
    let [a, b] = in_either;
    for term in words.terms() {
        let pattern = format!("%{term}%");
        DB::push_bind(qb.push(" AND (lower(").push(a).push(") LIKE "), pattern.clone());
        DB::push_bind(qb.push(" OR lower(").push(b).push(") LIKE "), pattern).push(")");
    }
}

/// ` LIMIT … OFFSET …` of `page`.
fn push_page<DB: Dialect>(qb: &mut QueryBuilder<DB>, page: PageRequest) {
    DB::push_bind(qb.push(" LIMIT "), i64::from(page.limit()));
    DB::push_bind(qb.push(" OFFSET "), i64::try_from(page.offset()).unwrap_or(i64::MAX));
}

/// A page of items (lenses, battles) from rows carrying a `total` column;
/// `count` answers the total when the page is past the end and so has no
/// rows to carry it.
pub(crate) async fn page_of<R: Columns, T>(
    rows: Vec<R>,
    page: PageRequest,
    from_row: fn(&R) -> LfResult<T>,
    count: impl AsyncFnOnce() -> LfResult<i64>,
) -> LfResult<Page<T>> {
    let total = match rows.first() {
        Some(row) => row.value::<i64>("total")?,
        None if page.offset() == 0 => 0,
        None => count().await?,
    };
    let items = rows.iter().map(from_row).collect::<LfResult<Vec<_>>>()?;
    Ok(Page::new(items, u64::try_from(total).unwrap_or(0), page))
}
