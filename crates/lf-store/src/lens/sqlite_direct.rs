//! The lens read that bypasses sqlx on SQLite (see `sqlite::direct` for
//! why): `get_lens_and_version`, which every get_lens and run_lens makes.
//! It runs the statement of `sql`, as SQLite spells it, on a direct reader
//! and decodes the row with `rows`, so that both paths answer alike; the
//! test below holds it to the sqlx path's answer.

use lf_core::{LensId, LfResult, Reach};
use lf_lens::{Lens, LensVersion, VersionSelector};

use super::{rows, sql};
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
    let (asked_id, major, minor, patch);
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
        VersionSelector::Label(_) => unreachable!("SHIM"),
    }
    let sql = sql::lens_and_version_sql(which).sqlite;
    first_row(conn, sql, params.as_slice(), |row| rows::lens_and_version(row, id, which))
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
    /// stranger and the service, by head, id and semver, and versions that
    /// are not there: the direct read answers as the sqlx read does.
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
        let mut compared = 0;
        for (lens_id, owner, version_id, major, minor, patch) in versions {
            let id = LensId::from_uuid(lens_id);
            let semver = rows::semver((major, minor, patch)).unwrap();
            let selectors = [
                VersionSelector::Head,
                VersionSelector::Id(lf_core::VersionId::from_uuid(version_id)),
                VersionSelector::Semver(semver),
                VersionSelector::Id(lf_core::VersionId::new()),
                VersionSelector::Semver(lf_lens::Semver { major: 99, minor: 0, patch: 0 }),
            ];
            let reaches = [
                Reach::Everything,
                Reach::Lenser(LenserId::from_uuid(owner)),
                Reach::Lenser(LenserId::new()),
            ];
            for which in selectors {
                for reach in reaches {
                    let direct = db.direct_blocking(move |c| lens_and_version(c, reach, id, which)).await;
                    let sqlx = db.reading(async |c| sql::lens_and_version(c, reach, id, which).await).await;
                    assert_eq!(shown(direct), shown(sqlx), "{reach:?} {id} {which:?}");
                    compared += 1;
                }
            }
        }
        let missing = LensId::new();
        let direct = db
            .direct_blocking(move |c| lens_and_version(c, Reach::Everything, missing, VersionSelector::Head));
        assert_eq!(shown(direct.await), Ok(None));
        assert!(compared > 100);
        db.close().await;
    }

    /// Every table the cached `get_lens_and_version` reads (the lens, its
    /// version and the version's parameters) moves the cached reads'
    /// generation when a row of it changes.
    #[tokio::test]
    async fn every_table_lens_and_version_reads_moves_the_generation() {
        let (_dir, db) = on_a_new_file().await;
        let semver = lf_lens::Semver { major: 1, minor: 0, patch: 0 };
        let statements = [
            VersionSelector::Head,
            VersionSelector::Id(lf_core::VersionId::new()),
            VersionSelector::Semver(semver),
        ]
        .map(|which| sql::lens_and_version_sql(which).sqlite);
        let read = tables_that_move_the_generation(&db, &statements).await;
        assert_eq!(
            read.iter().map(String::as_str).collect::<Vec<_>>(),
            ["lens_versions", "lenses", "version_params"]
        );
        db.close().await;
    }
}
