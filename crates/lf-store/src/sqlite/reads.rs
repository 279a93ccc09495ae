//! The reads that bypass sqlx (see [`super::direct`] for why): each runs its
//! store's statement, as SQLite spells it, on a direct reader, and decodes
//! the rows with the store's own row functions, so that both paths answer
//! alike.

use lf_auth::TokenRecord;
use lf_battle::{BattleResult, BattleType};
use lf_core::{LensId, LfResult, Reach};
use lf_lens::{Lens, LensVersion, VersionSelector};
use rusqlite::{Connection, ToSql};

use super::direct::{DirectRow, first_row, rows};
use crate::{auth, battle, lens};

/// `get_lens_and_version`: lens `id` of reach `reach` and its version
/// `which`, in one query; `None` when there is no such lens, a
/// VERSION_NOT_FOUND error when the lens has no such version.
pub(crate) fn lens_and_version(
    conn: &Connection,
    reach: Reach,
    id: LensId,
    which: VersionSelector,
) -> LfResult<Option<(Lens, LensVersion)>> {
    let (lens_id, owner) = (id.as_uuid(), lens::sql::reach_owner(reach));
    let (asked_id, major, minor, patch);
    let mut params: Vec<(&str, &dyn ToSql)> = vec![("$1", &lens_id), ("$2", &owner)];
    match which {
        VersionSelector::Head => {}
        VersionSelector::Id(v) => {
            asked_id = v.as_uuid();
            params.push(("$3", &asked_id));
        }
        VersionSelector::Semver(s) => {
            (major, minor, patch) = lens::rows::semver_parts(s);
            params.extend([("$3", &major as _), ("$4", &minor as _), ("$5", &patch as _)]);
        }
    }
    let sql = lens::sql::lens_and_version_sql(which).sqlite;
    first_row(conn, sql, params.as_slice(), |row| lens::rows::lens_and_version(&DirectRow(row), id, which))
}

/// `token_by_hash`: the access token whose secret hashes to `hash`.
pub(crate) fn token_by_hash(conn: &Connection, hash: &[u8; 32]) -> LfResult<Option<TokenRecord>> {
    first_row(conn, auth::sql::TOKEN_BY_HASH, [hash], |row| auth::rows::token_record(&DirectRow(row)))
}

/// `closed_results`: every closed or published battle's results, of type
/// `battle_type` when given.
pub(crate) fn closed_results(
    conn: &Connection,
    battle_type: Option<BattleType>,
) -> LfResult<Vec<BattleResult>> {
    let (all, only) = (battle_type.is_none(), battle_type.map_or("", |t| t.as_str()));
    let params: &[(&str, &dyn ToSql)] = &[("$1", &all), ("$2", &only)];
    rows(conn, battle::sql::CLOSED_RESULTS, params, |row| battle::rows::battle_result(&DirectRow(row)))
}

