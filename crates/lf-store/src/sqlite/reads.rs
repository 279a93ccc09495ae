//! The reads that bypass sqlx (see [`super::direct`] for why): each runs its
//! store's statement, as SQLite spells it, on a direct reader, and decodes
//! the rows with the store's own row functions, so that both paths answer
//! alike. The tests below hold each one to the sqlx path's answer.

use super::{Connection, ToSql, first_row, rows};
use crate::{agent, auth, battle, lens};
use lf_agent::{Agent, Grant, ToolKey};
use lf_auth::TokenRecord;
use lf_battle::{BattleResult, BattleType};
use lf_core::{LensId, LenserId, LfResult, Reach};
use lf_lens::{Lens, LensVersion, VersionSelector};

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
    first_row(conn, sql, params.as_slice(), |row| lens::rows::lens_and_version(row, id, which))
}

/// `agent_and_grant`: agent `id` of reach `reach` with its members, and
/// its grant of `tool`; `None` when there is no such agent.
pub(crate) fn agent_and_grant(
    conn: &Connection,
    reach: Reach,
    id: LenserId,
    tool: &ToolKey,
) -> LfResult<Option<(Agent, Option<Grant>)>> {
    let (everything, me) = agent::sql::reach_params(reach);
    let agent_id = id.as_uuid();
    let params: &[(&str, &dyn ToSql)] = &[("$1", &agent_id), ("$2", &everything), ("$3", &me)];
    let Some(mut a) = first_row(conn, agent::sql::GET_AGENT, params, |row| agent::rows::agent(row))? else {
        return Ok(None);
    };
    let members =
        rows(conn, agent::sql::MEMBERS, &[("$1", &agent_id as &dyn ToSql)], |row| agent::rows::member(row))?;
    a.members = members.into_iter().map(|(_, m)| m).collect();
    let (tool_id, tool_name);
    let (sql, tool): (_, &dyn ToSql) = match tool {
        ToolKey::Id(id) => {
            tool_id = id.as_uuid();
            (agent::sql::GRANT_BY_ID, &tool_id)
        }
        ToolKey::Name(name) => {
            tool_name = name.as_str();
            (agent::sql::GRANT_BY_NAME, &tool_name)
        }
    };
    let grant = first_row(conn, sql, &[("$1", &agent_id as &dyn ToSql), ("$2", tool)], |row| {
        agent::rows::grant(row)
    })?;
    Ok(Some((a, grant)))
}

/// `token_by_hash`: the access token whose secret hashes to `hash`.
pub(crate) fn token_by_hash(conn: &Connection, hash: &[u8; 32]) -> LfResult<Option<TokenRecord>> {
    first_row(conn, auth::sql::TOKEN_BY_HASH, [hash], |row| auth::rows::token_record(row))
}

/// `closed_results`: every closed or published battle's results, of type
/// `battle_type` when given.
pub(crate) fn closed_results(
    conn: &Connection,
    battle_type: Option<BattleType>,
) -> LfResult<Vec<BattleResult>> {
    let (all, only) = (battle_type.is_none(), battle_type.map_or("", |t| t.as_str()));
    let params: &[(&str, &dyn ToSql)] = &[("$1", &all), ("$2", &only)];
    rows(conn, battle::sql::CLOSED_RESULTS, params, |row| battle::rows::battle_result(row))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use lf_auth::SecretHash;
    use lf_core::{LenserId, LfError};
    use uuid::Uuid;

    use super::*;
    use crate::conns::Conns;
    use crate::sqlite::Handle;

    /// An error as a client would see it.
    fn shown<T>(r: LfResult<T>) -> Result<T, (lf_core::ErrorCode, String)> {
        r.map_err(|e: LfError| (e.code(), e.message().to_owned()))
    }

    /// A file database (an in-memory one has no direct readers of its own)
    /// that the stores' contract suites have filled.
    async fn filled() -> (tempfile::TempDir, Handle) {
        let dir = tempfile::tempdir().unwrap();
        let db = Handle::open(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
        let conns = Conns::Sqlite(db.clone());
        lf_lens::contract::suite(Arc::new(lens::SqlLensStore::new(conns.clone()))).await;
        lf_auth::contract::suite(Arc::new(auth::SqlAuthStore::new(conns.clone()))).await;
        lf_battle::contract::suite(Arc::new(battle::SqlBattleStore::new(conns.clone()))).await;
        lf_agent::contract::suite(Arc::new(agent::SqlAgentStore::new(conns))).await;
        (dir, db)
    }

    /// Every lens and version the suite left, for its owner, a stranger and
    /// the service, by head, id and semver, and versions that are not
    /// there: the direct read answers as the sqlx read does.
    #[tokio::test]
    async fn lens_and_version_answers_as_the_sqlx_read() {
        let (_dir, db) = filled().await;
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
            let semver = lens::rows::semver((major, minor, patch)).unwrap();
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
                    let sqlx =
                        db.reading(async |c| lens::sql::lens_and_version(c, reach, id, which).await).await;
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

    /// Every agent the suite left, with each of its grants by id and by
    /// name and a tool it was not granted, for its owner, its members, a
    /// stranger and the service: the direct read answers as the sqlx read.
    #[tokio::test]
    async fn agent_and_grant_answers_as_the_sqlx_read() {
        let (_dir, db) = filled().await;
        let agents: Vec<(Uuid, Uuid)> =
            sqlx::query_as("SELECT id, owner_id FROM agents").fetch_all(db.diagnostics_pool()).await.unwrap();
        assert!(agents.len() > 10, "the suite leaves agents behind");
        // The suite revokes what it grants: grant each agent a tool again.
        let store = agent::SqlAgentStore::new(Conns::Sqlite(db.clone()));
        for (agent_id, owner) in &agents {
            let tool = lf_agent::ToolRef {
                id: lf_agent::ToolId::new(),
                name: lf_agent::ToolName::parse("tool", "get_lens").unwrap(),
                group: lf_agent::ToolGroup::parse("group", "lens").unwrap(),
                safety: lf_agent::Safety::Read,
            };
            let granted_by = LenserId::from_uuid(*owner);
            let grant = Grant {
                agent: LenserId::from_uuid(*agent_id),
                tool,
                granted_by,
                granted_at: lf_core::Timestamp::from_micros(1),
            };
            lf_agent::AgentStore::put_grant(&store, &grant, 100).await.unwrap();
        }
        let (mut compared, mut granted, mut with_members) = (0, 0, 0);
        for (agent_id, owner) in agents {
            let id = LenserId::from_uuid(agent_id);
            let grants: Vec<(Uuid, String)> =
                sqlx::query_as("SELECT tool_id, tool_name FROM agent_grants WHERE agent_id = $1")
                    .bind(agent_id)
                    .fetch_all(db.diagnostics_pool())
                    .await
                    .unwrap();
            let members: Vec<Uuid> =
                sqlx::query_scalar("SELECT lenser_id FROM agent_members WHERE agent_id = $1")
                    .bind(agent_id)
                    .fetch_all(db.diagnostics_pool())
                    .await
                    .unwrap();
            with_members += usize::from(!members.is_empty());
            let mut keys = vec![ToolKey::Id(lf_agent::ToolId::new())];
            for (tool, name) in grants {
                keys.push(ToolKey::Id(lf_agent::ToolId::from_uuid(tool)));
                keys.push(ToolKey::Name(lf_agent::ToolName::parse("tool", &name).unwrap()));
            }
            let mut reaches = vec![
                Reach::Everything,
                Reach::Lenser(LenserId::from_uuid(owner)),
                Reach::Lenser(LenserId::new()),
            ];
            reaches.extend(members.into_iter().map(|m| Reach::Lenser(LenserId::from_uuid(m))));
            for key in &keys {
                for &reach in &reaches {
                    let k = key.clone();
                    let direct = db.direct_blocking(move |c| agent_and_grant(c, reach, id, &k)).await;
                    let sqlx =
                        db.snapshot(async |c| agent::sql::agent_and_grant(c, reach, id, key).await).await;
                    let direct = direct.map(|found| found.ok_or(()));
                    match (shown(direct), shown(sqlx)) {
                        (Ok(Ok(d)), Ok(s)) => {
                            granted += usize::from(d.1.is_some());
                            assert_eq!(d, s, "{reach:?} {id} {key}");
                        }
                        (Ok(Err(())), Err((code, _))) => assert_eq!(code, lf_core::ErrorCode::NotFound),
                        (d, s) => panic!("{reach:?} {id} {key}: direct {d:?}, sqlx {s:?}"),
                    }
                    compared += 1;
                }
            }
        }
        assert!(compared > 100 && granted > 10 && with_members > 0, "{compared} {granted} {with_members}");
        db.close().await;
    }

    #[tokio::test]
    async fn token_by_hash_answers_as_the_sqlx_read() {
        let (_dir, db) = filled().await;
        let hashes: Vec<Vec<u8>> = sqlx::query_scalar("SELECT token_hash FROM access_tokens")
            .fetch_all(db.diagnostics_pool())
            .await
            .unwrap();
        assert!(hashes.len() > 3, "the suite leaves tokens behind");
        let unknown = SecretHash::of("lf_mcp_not_a_token").as_bytes().to_vec();
        for bytes in hashes.into_iter().chain([unknown]) {
            let hash = SecretHash::from_slice(&bytes).unwrap();
            let key = *hash.as_bytes();
            let direct = db.direct_blocking(move |c| token_by_hash(c, &key)).await;
            let sqlx = db.reading(async |c| auth::sql::token_by_hash(c, &hash).await).await;
            assert_eq!(shown(direct), shown(sqlx));
        }
        db.close().await;
    }

    #[tokio::test]
    async fn closed_results_answer_as_the_sqlx_read() {
        let (_dir, db) = filled().await;
        let mut seen = 0;
        for battle_type in std::iter::once(None).chain(BattleType::ALL.iter().copied().map(Some)) {
            let direct = db.direct_blocking(move |c| closed_results(c, battle_type)).await.unwrap();
            let sqlx = db.reading(async |c| battle::sql::closed_results(c, battle_type).await).await.unwrap();
            assert_eq!(direct, sqlx, "{battle_type:?}");
            seen += direct.len();
        }
        assert!(seen > 0, "the suite leaves closed battles behind");
        db.close().await;
    }

    /// Every table a cached read reads (a lens and its version, a token,
    /// an agent with its members and a grant) moves the cached reads'
    /// generation on when a row of it is inserted, updated or deleted
    /// (migration 0016): a table added to one of those reads without its
    /// triggers would leave answers kept past a change.
    #[tokio::test]
    async fn every_table_a_cached_read_reads_moves_its_generation() {
        let dir = tempfile::tempdir().unwrap();
        let db = Handle::open(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
        let tables: Vec<String> = sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
            .fetch_all(db.diagnostics_pool())
            .await
            .unwrap();
        let triggers: Vec<(String, String)> =
            sqlx::query_as("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'")
                .fetch_all(db.diagnostics_pool())
                .await
                .unwrap();
        let cached = [
            agent::sql::GET_AGENT,
            agent::sql::MEMBERS,
            agent::sql::GRANT_BY_ID,
            agent::sql::GRANT_BY_NAME,
            auth::sql::TOKEN_BY_HASH,
            lens::sql::lens_and_version_sql(VersionSelector::Head).sqlite,
            lens::sql::lens_and_version_sql(VersionSelector::Id(lf_core::VersionId::new())).sqlite,
            lens::sql::lens_and_version_sql(VersionSelector::Semver(lf_lens::Semver {
                major: 1,
                minor: 0,
                patch: 0,
            }))
            .sqlite,
        ];
        let mut read = std::collections::BTreeSet::new();
        for sql in cached {
            let words: Vec<&str> = sql.split_whitespace().collect();
            for pair in words.windows(2) {
                if matches!(pair[0], "FROM" | "JOIN") && tables.iter().any(|t| t == pair[1]) {
                    read.insert(pair[1].to_owned());
                }
            }
        }
        assert!(read.len() >= 7, "the cached reads read {read:?}");
        for table in &read {
            for event in ["INSERT", "UPDATE", "DELETE"] {
                let moves = triggers.iter().any(|(on, sql)| {
                    on == table
                        && sql.contains(&format!("AFTER {event} ON {table}"))
                        && sql.contains("UPDATE cached_reads_generation SET n = n + 1")
                });
                assert!(moves, "no trigger moves the cached reads' generation after {event} on {table}");
            }
        }
        db.close().await;
    }
}
