//! Lens labels (`0024_lens_labels.sql` on SQLite, `0020_lens_labels.sql` on
//! PostgreSQL): the labels as they are in `lens_labels`, every move in
//! `lens_label_moves`. The statements are the same on both backends but
//! for the lens's lock and the reach's cast.
//!
//! A change is one write transaction that locks the lens first (SQLite:
//! `BEGIN IMMEDIATE`; PostgreSQL: `SELECT … FOR NO KEY UPDATE`, which
//! leaves the foreign-key checks of other writes free), then reads the
//! label as it is and checks its protection under that lock: of two racing
//! changes, the later reads what the earlier wrote, and the moves' `seq`s
//! follow the order they took effect. A label is read by its lens with the
//! lens (`sql::lens_and_version`), and a lens's labels on SQLite's direct
//! reader (`sqlite_direct::labels`).

use lf_core::{LensId, LfError, LfResult, Page, PageRequest, Reach};
use lf_lens::{LabelChange, LabelChanged, LabelMove, LabelName, LensLabel, VersionRef};
use uuid::Uuid;

use super::rows::semver;
use super::sql::reach_2;
use crate::dialect::{Bind, Columns, Conn, Spellings, execute, query, row_of, rows_of, spelled};
use crate::error::corrupt;
use crate::reach::BindReach;

macro_rules! lock_lens {
    (sqlite) => {
        "SELECT 1 FROM lenses WHERE id = $1 AND deleted_at IS NULL"
    };
    (postgres) => {
        "SELECT 1 FROM lenses WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE"
    };
}
/// The live lens `$1`, locked until the transaction ends (SQLite's write
/// lock is already held).
const LOCK_LENS: Spellings = spelled!(lock_lens);

/// The columns of a label, in the order [`label`] reads them.
macro_rules! label_columns {
    () => {
        "t.label, t.version_id, v.major, v.minor, v.patch, t.protected, t.moved_by, t.moved_by_agent, \
         t.moved_at"
    };
}

/// Label `$2` of lens `$1`, with its stored protection flag.
const LABEL_NOW: &str = concat!(
    "SELECT ",
    label_columns!(),
    " FROM lens_labels t JOIN lens_versions v ON v.id = t.version_id WHERE t.lens_id = $1 AND t.label = $2"
);

/// Version `$1`, if it is one of lens `$2`'s.
const VERSION_OF_LENS: &str = "SELECT major, minor, patch FROM lens_versions WHERE id = $1 AND lens_id = $2";

const PUT_LABEL: &str = "INSERT INTO lens_labels \
     (lens_id, label, version_id, protected, moved_by, moved_by_agent, moved_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (lens_id, label) DO UPDATE SET \
     version_id = excluded.version_id, protected = excluded.protected, moved_by = excluded.moved_by, \
     moved_by_agent = excluded.moved_by_agent, moved_at = excluded.moved_at";

const DELETE_LABEL: &str = "DELETE FROM lens_labels WHERE lens_id = $1 AND label = $2";

const INSERT_MOVE: &str = "INSERT INTO lens_label_moves \
     (lens_id, label, from_version_id, to_version_id, moved_by, moved_by_agent, moved_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq";

/// The labels of lens `$1` of reach `$2`: no row when the lens is not
/// readable, one row of NULLs when it has no labels.
macro_rules! list_labels {
    ($b:tt) => {
        concat!(
            "SELECT ",
            label_columns!(),
            " FROM lenses l LEFT JOIN lens_labels t ON t.lens_id = l.id \
             LEFT JOIN lens_versions v ON v.id = t.version_id \
             WHERE l.id = $1 AND l.deleted_at IS NULL AND ",
            reach_2!($b)
        )
    };
}
pub(crate) const LIST_LABELS: Spellings = spelled!(list_labels);

/// A page (`$3` moves from the `$4`th, newest first) of the moves of lens
/// `$1` of reach `$2` (of label `$5` alone with `$filter`), and their
/// total: no row when the lens is not readable, one row of NULLs and the
/// total when the page is empty.
macro_rules! label_history {
    ($b:tt, $filter:tt) => {
        concat!(
            "SELECT m.seq, m.label, m.from_version_id, f.major AS from_major, f.minor AS from_minor, \
             f.patch AS from_patch, m.to_version_id, o.major AS to_major, o.minor AS to_minor, \
             o.patch AS to_patch, m.moved_by, m.moved_by_agent, m.moved_at, \
             (SELECT count(*) FROM lens_label_moves WHERE lens_id = $1",
            $filter,
            ") AS total FROM lenses l LEFT JOIN (SELECT seq, label, from_version_id, to_version_id, moved_by, \
             moved_by_agent, moved_at FROM lens_label_moves WHERE lens_id = $1",
            $filter,
            " ORDER BY seq DESC LIMIT $3 OFFSET $4) m ON 1 = 1 \
             LEFT JOIN lens_versions f ON f.id = m.from_version_id \
             LEFT JOIN lens_versions o ON o.id = m.to_version_id \
             WHERE l.id = $1 AND l.deleted_at IS NULL AND ",
            reach_2!($b),
            " ORDER BY m.seq DESC"
        )
    };
}
const LABEL_HISTORY: Spellings = spelled!(label_history, "");
const LABEL_HISTORY_OF_ONE: Spellings = spelled!(label_history, " AND label = $5");

/// The label of lens `lens_id` in a row of [`label_columns`], with the
/// stored protection flag; `None` for a row of NULLs.
pub(crate) fn label(row: &impl Columns, lens_id: LensId) -> LfResult<Option<LensLabel>> {
    let Some(name) = row.value::<Option<String>>(0)? else { return Ok(None) };
    let name = LabelName::parse("label", &name).map_err(|e| corrupt(format!("lens_labels.label: {e}")))?;
    Ok(Some(LensLabel {
        lens_id,
        name,
        version: VersionRef {
            id: lf_core::VersionId::from_uuid(row.value(1)?),
            semver: semver((row.value(2)?, row.value(3)?, row.value(4)?))?,
        },
        protected: row.value(5)?,
        moved_by: row.value::<Option<Uuid>>(6)?.map(lf_core::LenserId::from_uuid),
        moved_by_agent: row.value::<Option<Uuid>>(7)?.map(lf_core::LenserId::from_uuid),
        moved_at: row.time(8)?,
    }))
}

/// The labels of a lens from the rows of [`LIST_LABELS`], by name; `None`
/// when there were no rows (no readable lens).
pub(crate) fn labels_of(rows: Vec<Option<LensLabel>>) -> Option<Vec<LensLabel>> {
    if rows.is_empty() {
        return None;
    }
    let mut labels: Vec<LensLabel> = rows.into_iter().flatten().map(LensLabel::as_read).collect();
    labels.sort_unstable_by_key(|l| l.name);
    Some(labels)
}

/// Applies `change` and records the move (see `LensStore::change_label`);
/// run in a write transaction.
pub(crate) async fn change_label<C: Conn>(conn: &mut C, change: &LabelChange) -> LfResult<LabelChanged> {
    let (lens_id, lens) = (change.lens_id, change.lens_id.as_uuid());
    let name = change.label.as_str();
    let locked = row_of(conn, query(LOCK_LENS.of::<C::Database>()).put(lens), |_| Ok(())).await?;
    if locked.is_none() {
        return Err(LfError::not_found("Lens", lens_id));
    }
    let current = row_of(conn, query(LABEL_NOW).put(lens).put(name.to_owned()), |row| label(row, lens_id))
        .await?
        .flatten();
    if let Some(refused) = change.refused(current.as_ref()) {
        return Ok(refused);
    }
    let to = match change.to {
        Some(id) => {
            let q = query(VERSION_OF_LENS).put(id.as_uuid()).put(lens);
            let found = row_of(conn, q, |row| semver((row.value(0)?, row.value(1)?, row.value(2)?))).await?;
            let semver =
                found.ok_or_else(|| LfError::not_found(&format!("Version of lens {lens_id}:"), id))?;
            Some(VersionRef { id, semver })
        }
        None => None,
    };
    let from = current.as_ref().map(|l| l.version);
    let moved = from != to;
    let after = match change.after(current.as_ref(), to) {
        None => {
            execute(conn, query(DELETE_LABEL).put(lens).put(name.to_owned())).await?;
            None
        }
        Some(after) => {
            // Nothing to write when nothing changes (a write would also
            // forget what SQLite's readers keep).
            if current.as_ref() != Some(&after) {
                let q = query(PUT_LABEL)
                    .put(lens)
                    .put(name.to_owned())
                    .put(after.version.id.as_uuid())
                    .put(after.protected)
                    .put(after.moved_by.map(|l| l.as_uuid()))
                    .put(after.moved_by_agent.map(|l| l.as_uuid()))
                    .put_time(after.moved_at);
                execute(conn, q).await?;
            }
            Some(after.as_read())
        }
    };
    if !moved {
        return Ok(LabelChanged::Done { record: None, label: after });
    }
    let q = query(INSERT_MOVE)
        .put(lens)
        .put(name.to_owned())
        .put(from.map(|v| v.id.as_uuid()))
        .put(to.map(|v| v.id.as_uuid()))
        .put(change.by.map(|l| l.as_uuid()))
        .put(change.by_agent.map(|l| l.as_uuid()))
        .put_time(change.at);
    let seq = row_of(conn, q, |row| row.value::<i64>(0))
        .await?
        .ok_or_else(|| LfError::internal("the move of a label was not recorded"))?;
    Ok(LabelChanged::Done { record: Some(change.record(seq, from, to)), label: after })
}

/// The labels of lens `lens_id` of reach `reach`, by name; `None` when
/// there is no such lens. (SQLite's store reads them on a direct reader
/// instead: `sqlite_direct::labels`.)
pub(crate) async fn list_labels<C: Conn>(
    conn: &mut C,
    reach: Reach,
    lens_id: LensId,
) -> LfResult<Option<Vec<LensLabel>>> {
    let q = query(LIST_LABELS.of::<C::Database>()).put(lens_id.as_uuid()).put_owner_or_null(reach);
    Ok(labels_of(rows_of(conn, q, |row| label(row, lens_id)).await?))
}

/// Version `id` (with its semver parts) at the columns named `id`,
/// `{part}_major`, … of a history row, if not NULL.
fn version_at(row: &impl Columns, id: &str, part: &str) -> LfResult<Option<VersionRef>> {
    let Some(version) = row.value::<Option<Uuid>>(id)? else { return Ok(None) };
    let col = |what: &str| row.value::<i64>(format!("{part}_{what}").as_str());
    Ok(Some(VersionRef {
        id: lf_core::VersionId::from_uuid(version),
        semver: semver((col("major")?, col("minor")?, col("patch")?))?,
    }))
}

/// A move of lens `lens_id` in a row of `LABEL_HISTORY`; `None` for the
/// row of NULLs of an empty page.
fn label_move(row: &impl Columns, lens_id: LensId) -> LfResult<Option<LabelMove>> {
    let Some(seq) = row.value::<Option<i64>>("seq")? else { return Ok(None) };
    let label = row.text("label")?;
    Ok(Some(LabelMove {
        seq,
        lens_id,
        label: LabelName::parse("label", label)
            .map_err(|e| corrupt(format!("lens_label_moves.label: {e}")))?,
        from: version_at(row, "from_version_id", "from")?,
        to: version_at(row, "to_version_id", "to")?,
        by: row.value::<Option<Uuid>>("moved_by")?.map(lf_core::LenserId::from_uuid),
        by_agent: row.value::<Option<Uuid>>("moved_by_agent")?.map(lf_core::LenserId::from_uuid),
        at: row.time("moved_at")?,
    }))
}

/// A page of the moves of lens `lens_id`'s labels (of `label` alone when
/// given), newest first; NOT_FOUND when the lens is not readable.
pub(crate) async fn label_history<C: Conn>(
    conn: &mut C,
    reach: Reach,
    lens_id: LensId,
    label: Option<LabelName>,
    page: PageRequest,
) -> LfResult<Page<LabelMove>> {
    let sql = if label.is_some() { &LABEL_HISTORY_OF_ONE } else { &LABEL_HISTORY };
    let q = query(sql.of::<C::Database>())
        .put(lens_id.as_uuid())
        .put_owner_or_null(reach)
        .put(i64::from(page.limit()))
        .put(i64::try_from(page.offset()).unwrap_or(i64::MAX));
    let q = match label {
        Some(l) => q.put(l.as_str().to_owned()),
        None => q,
    };
    let rows = q.fetch_all(conn.exec()).await.map_err(crate::error::map_db_err)?;
    let Some(first) = rows.first() else { return Err(LfError::not_found("Lens", lens_id)) };
    let total = first.value::<i64>("total")?;
    let items = rows.iter().map(|row| label_move(row, lens_id)).collect::<LfResult<Vec<_>>>()?;
    Ok(Page::new(items.into_iter().flatten().collect(), u64::try_from(total).unwrap_or(0), page))
}
