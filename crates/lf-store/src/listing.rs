//! The pieces of a listing both backends build the same way: the reach and
//! filter predicates of lenses, the page bounds, and reading a page back.
//! Only the row decoding differs, and the caller passes it in. (Battle
//! listings build their predicates in `battle_sql`.)

use lf_core::{LfResult, Page, PageRequest, Reach};
use lf_lens::{LensFilter, LensStatus};
use sqlx::{ColumnIndex, Database, Decode, Encode, QueryBuilder, Row, Type};
use uuid::Uuid;

use crate::error::map_db_err;

/// ` AND <the caller may read l>`, nothing for a principal that reads everything.
fn push_reach<DB>(qb: &mut QueryBuilder<DB>, reach: Reach)
where
    DB: Database,
    Uuid: for<'t> Encode<'t, DB> + Type<DB>,
{
    if let Reach::Lenser(me) = reach {
        qb.push(" AND (l.owner_id = ").push_bind(me.as_uuid()).push(" OR l.visibility <> 'private')");
    }
}

/// The `FROM … WHERE` of a listing. Its text depends only on which filters
/// are set, so the prepared-statement cache holds one statement per shape.
pub(crate) fn push_list_from<DB>(qb: &mut QueryBuilder<DB>, reach: Reach, filter: &LensFilter)
where
    DB: Database,
    Uuid: for<'t> Encode<'t, DB> + Type<DB>,
    &'static str: for<'t> Encode<'t, DB> + Type<DB>,
{
    qb.push(" FROM lenses l WHERE l.deleted_at IS NULL");
    if !(filter.include_archived || filter.status == Some(LensStatus::Archived)) {
        qb.push(" AND l.status <> 'archived'");
    }
    push_reach(qb, reach);
    if let Some(v) = filter.visibility {
        qb.push(" AND l.visibility = ").push_bind(v.as_str());
    }
    if let Some(s) = filter.status {
        qb.push(" AND l.status = ").push_bind(s.as_str());
    }
    if let Some(o) = filter.owner {
        qb.push(" AND l.owner_id = ").push_bind(o.as_uuid());
    }
}

/// ` LIMIT … OFFSET …` of `page`.
pub(crate) fn push_page<DB>(qb: &mut QueryBuilder<DB>, page: PageRequest)
where
    DB: Database,
    i64: for<'t> Encode<'t, DB> + Type<DB>,
{
    qb.push(" LIMIT ")
        .push_bind(i64::from(page.limit()))
        .push(" OFFSET ")
        .push_bind(i64::try_from(page.offset()).unwrap_or(i64::MAX));
}

/// A page of items (lenses, battles) from rows carrying a `total` column;
/// `count` answers the total when the page is past the end and so has no
/// rows to carry it.
pub(crate) async fn page_of<R, T>(
    rows: Vec<R>,
    page: PageRequest,
    from_row: fn(&R) -> LfResult<T>,
    count: impl AsyncFnOnce() -> LfResult<i64>,
) -> LfResult<Page<T>>
where
    R: Row,
    &'static str: ColumnIndex<R>,
    i64: for<'r> Decode<'r, R::Database> + Type<R::Database>,
{
    let total = match rows.first() {
        Some(row) => row.try_get::<i64, _>("total").map_err(map_db_err)?,
        None if page.offset() == 0 => 0,
        None => count().await?,
    };
    let items = rows.iter().map(from_row).collect::<LfResult<Vec<_>>>()?;
    Ok(Page::new(items, u64::try_from(total).unwrap_or(0), page))
}
