//! The lens reads that bypass sqlx on SQLite (see `sqlite::direct` for
//! why): `get_lens_and_version`, which every get_lens and run_lens makes,
//! and a lens's labels, which get_lens shows. Each runs the statement of
//! `sql` or `labels`, as SQLite spells it, on a direct reader and decodes
//! the rows with the same code, so that both paths answer alike; the tests
//! below hold them to the sqlx path's answers.

use lf_core::{LensId, LfResult, Reach};
use lf_lens::{Lens, LensLabel, LensVersion, VersionSelector};

use super::{labels, rows, sql};
use crate::reach::owner_or_null;
use crate::sqlite::{Connection, ToSql, first_row};

/// Lens `id` of reach `reach` and its version `which`, in one query;
/// `None` when there is no such lens, a VERSION_NOT_FOUND error when the
/// lens has no such version (as [`sql::lens_and_version`]).
pub(crate) fn lens_and_version(
    conn: &Connection,
    reach: Reach,
    id: LensId,
    which: VersionSelector,
) -> LfResult<Option<(Lens, LensVersion)>> {
    let (lens_id, owner) = (id.as_uuid(), owner_or_null(reach));
    let (asked_id, major, minor, patch, label);
    let mut params: Vec<(&str, &dyn ToSql)> = vec![("$1", &lens_id), ("$2", &owner)];
    match which {
        VersionSelector::Head => {}
        VersionSelector::Id(v) => {
            asked_id = v.as_uuid();
            params.push(("$3", &asked_id));
        }
        VersionSelector::Semver(s) => {
            (major, minor, patch) = rows::semver_parts(s);
            params.extend([("$3", &major as _), ("$4", &minor as _), ("$5", &patch as _)]);
        }
        VersionSelector::Label(l) => {
            label = l.as_str().to_owned();
            params.push(("$3", &label));
        }
    }
    let sql = sql::lens_and_version_sql(which).sqlite;
    first_row(conn, sql, params.as_slice(), |row| rows::lens_and_version(row, id, which))
}

/// The labels of lens `id` of reach `reach`, by name; `None` when there is
/// no such lens (as [`labels::list_labels`]).
pub(crate) fn labels(conn: &Connection, reach: Reach, id: LensId) -> LfResult<Option<Vec<LensLabel>>> {
    let (lens_id, owner) = (id.as_uuid(), owner_or_null(reach));
    let params: [(&str, &dyn ToSql); 2] = [("$1", &lens_id), ("$2", &owner)];
    let found = crate::sqlite::rows(conn, labels::LIST_LABELS.sqlite, params.as_slice(), |row| {
        labels::label(row, id)
    })?;
    Ok(labels::labels_of(found))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use lf_core::LenserId;
    use uuid::Uuid;

    use super::*;
    use crate::conns::Conns;
    use crate::sqlite::testing::{on_a_new_file, shown, tables_that_move_the_generation};

    /// Every lens and version the contract suite left, for its owner, a
    /// stranger and the service, by head, id, semver and label, and
    /// versions and labels that are not there: the direct read answers as
    /// the sqlx read does. So do the lists of each lens's labels.
    #[tokio::test]
    async fn lens_and_version_answers_as_the_sqlx_read() {
        let (_dir, db) = on_a_new_file().await;
        lf_lens::contract::suite(Arc::new(super::super::SqlLensStore::new(Conns::Sqlite(db.clone())))).await;
        let versions: Vec<(Uuid, Uuid, Uuid, i64, i64, i64)> = sqlx::query_as(
            "SELECT l.id, l.owner_id, v.id, v.major, v.minor, v.patch FROM lenses l \
             JOIN lens_versions v ON v.lens_id = l.id",
        )
        .fetch_all(db.diagnostics_pool())
        .await
        .unwrap();
        assert!(versions.len() > 10, "the suite leaves lenses behind");
        let labels: Vec<(Uuid, String)> = sqlx::query_as("SELECT lens_id, label FROM lens_labels")
            .fetch_all(db.diagnostics_pool())
            .await
            .unwrap();
        assert!(labels.len() > 2, "the suite leaves labels behind");
        let label = |s: &str| lf_lens::LabelName::parse("label", s).unwrap();
        let (mut compared, mut by_label, mut listed) = (0, 0, 0);
        for (lens_id, owner, version_id, major, minor, patch) in versions {
            let id = LensId::from_uuid(lens_id);
            let semver = rows::semver((major, minor, patch)).unwrap();
            let mut selectors = vec![
                VersionSelector::Head,
                VersionSelector::Id(lf_core::VersionId::from_uuid(version_id)),
                VersionSelector::Semver(semver),
                VersionSelector::Id(lf_core::VersionId::new()),
                VersionSelector::Semver(lf_lens::Semver { major: 99, minor: 0, patch: 0 }),
                VersionSelector::Label(label("nowhere")),
            ];
            selectors.extend(
                labels.iter().filter(|l| l.0 == lens_id).map(|l| VersionSelector::Label(label(&l.1))),
            );
            let reaches = [
                Reach::Everything,
                Reach::Lenser(LenserId::from_uuid(owner)),
                Reach::Lenser(LenserId::new()),
            ];
            for which in selectors {
                for reach in reaches {
                    let direct = db.direct_blocking(move |c| lens_and_version(c, reach, id, which)).await;
                    let sqlx = db.reading(async |c| sql::lens_and_version(c, reach, id, which).await).await;
                    if let (VersionSelector::Label(_), Ok(Some(_))) = (which, &sqlx) {
                        by_label += 1;
                    }
                    assert_eq!(shown(direct), shown(sqlx), "{reach:?} {id} {which:?}");
                    compared += 1;
                }
            }
            for reach in reaches {
                let direct = db.direct_blocking(move |c| super::labels(c, reach, id)).await;
                let sqlx = db.reading(async |c| labels::list_labels(c, reach, id).await).await;
                if sqlx.as_ref().is_ok_and(|l| l.as_ref().is_some_and(|l| !l.is_empty())) {
                    listed += 1;
                }
                assert_eq!(shown(direct), shown(sqlx), "{reach:?} {id}");
            }
        }
        let missing = LensId::new();
        let direct = db
            .direct_blocking(move |c| lens_and_version(c, Reach::Everything, missing, VersionSelector::Head));
        assert_eq!(shown(direct.await), Ok(None));
        let direct = db.direct_blocking(move |c| super::labels(c, Reach::Everything, missing));
        assert_eq!(shown(direct.await), Ok(None));
        assert!(compared > 100 && by_label > 10 && listed > 2, "{compared} {by_label} {listed}");
        db.close().await;
    }

    /// Every table the cached `get_lens_and_version` and `list_labels`
    /// read (the lens, its version and the version's parameters, its
    /// labels) moves the cached reads' generation when a row of it changes.
    #[tokio::test]
    async fn every_table_lens_and_version_reads_moves_the_generation() {
        let (_dir, db) = on_a_new_file().await;
        let semver = lf_lens::Semver { major: 1, minor: 0, patch: 0 };
        let label = lf_lens::LabelName::parse("label", "production").unwrap();
        let mut statements = [
            VersionSelector::Head,
            VersionSelector::Id(lf_core::VersionId::new()),
            VersionSelector::Semver(semver),
            VersionSelector::Label(label),
        ]
        .map(|which| sql::lens_and_version_sql(which).sqlite)
        .to_vec();
        statements.push(labels::LIST_LABELS.sqlite);
        let read = tables_that_move_the_generation(&db, &statements).await;
        assert_eq!(
            read.iter().map(String::as_str).collect::<Vec<_>>(),
            ["lens_labels", "lens_versions", "lenses", "version_params"]
        );
        db.close().await;
    }
}
