//! The agent statements that bypass sqlx on SQLite (see `sqlite::direct`
//! and [`crate::sqlite::Handle::write_direct`] for why): the read every
//! call of an agent makes (`agent_and_grant`, on a direct reader), and the
//! writes every call makes or its server's ledger makes for it (the day's
//! counts and the action log, on the direct writer in the writer's turn,
//! committed before they return). Each runs the statements of `sql`, as
//! SQLite spells them, binds and decodes with `rows` and decides with
//! `sql`'s rules, so that both paths read and write alike: the test below
//! holds the read to the sqlx path's answer, and the agent store's
//! contract suite runs over these writes on SQLite and over sqlx on
//! PostgreSQL.

use std::collections::HashSet;

use lf_agent::{ActionEntry, Agent, Ask, Grant, Reservation, ToolKey, Usage, UsageDay, agent_not_found};
use lf_core::{LenserId, LfResult, Reach};

use super::{rows, sql};
use crate::dialect::Bind;
use crate::reach::everything_or_me;
use crate::sqlite::{Connection, DirectParams, ToSql, execute, first_row, first_row_of, rows as all_rows};

/// Agent `id` of reach `reach` with its members, and its grant of
/// `tool`; `None` when there is no such agent.
pub(crate) fn agent_and_grant(
    conn: &Connection,
    reach: Reach,
    id: LenserId,
    tool: &ToolKey,
) -> LfResult<Option<(Agent, Option<Grant>)>> {
    let (everything, me) = everything_or_me(reach);
    let agent_id = id.as_uuid();
    let params: &[(&str, &dyn ToSql)] = &[("$1", &agent_id), ("$2", &everything), ("$3", &me)];
    let Some(mut a) = first_row(conn, sql::GET_AGENT, params, |row| rows::agent(row))? else {
        return Ok(None);
    };
    let members = all_rows(conn, sql::MEMBERS, &[("$1", &agent_id as &dyn ToSql)], |row| rows::member(row))?;
    a.members = members.into_iter().map(|(_, m)| m).collect();
    let (tool_id, tool_name);
    let (by_tool, tool): (_, &dyn ToSql) = match tool {
        ToolKey::Id(id) => {
            tool_id = id.as_uuid();
            (sql::GRANT_BY_ID, &tool_id)
        }
        ToolKey::Name(name) => {
            tool_name = name.as_str();
            (sql::GRANT_BY_NAME, &tool_name)
        }
    };
    let grant =
        first_row(conn, by_tool, &[("$1", &agent_id as &dyn ToSql), ("$2", tool)], |row| rows::grant(row))?;
    Ok(Some((a, grant)))
}

/// `reserve_usage` in the write transaction: the agent's day counts with
/// `asks` added, or the first ask that does not fit (nothing written).
pub(crate) fn reserve_usage(
    conn: &Connection,
    agent: LenserId,
    day: UsageDay,
    asks: &[Ask],
) -> LfResult<Reservation> {
    let used = usage_of(conn, agent, day)?;
    let out = sql::reserve(used, asks);
    if let Reservation::Reserved(after) = &out
        && after != &used
    {
        put_usage(conn, agent, day, after)?;
    }
    Ok(out)
}

/// `release_usage` in the write transaction: `units` given back.
pub(crate) fn release_usage(
    conn: &Connection,
    agent: LenserId,
    day: UsageDay,
    units: &Usage,
) -> LfResult<()> {
    let used = usage_of(conn, agent, day)?;
    let after = used.saturating_sub(*units);
    if after != used {
        put_usage(conn, agent, day, &after)?;
    }
    Ok(())
}

/// An action log batch ready for the direct writer: each chunk's insert
/// with its rows bound, made on the caller's thread ([`action_rows`]), so
/// that the write moves its parameters to the writer instead of a copy of
/// the entries to bind there.
pub(crate) struct ActionRows {
    /// The agents of the entries, each once.
    agents: Vec<LenserId>,
    /// Each chunk's statement, its parameters and what a clash of ids in it is told as.
    chunks: Vec<(&'static str, DirectParams, String)>,
}

/// `entries` bound for [`record_actions`].
pub(crate) fn action_rows(entries: &[ActionEntry]) -> ActionRows {
    let mut seen = HashSet::new();
    let agents = entries.iter().map(|e| e.agent).filter(|a| seen.insert(*a)).collect();
    let chunks = sql::action_chunks(entries)
        .map(|(insert, chunk)| {
            let params = chunk
                .iter()
                .fold(DirectParams::with_capacity(chunk.len() * sql::ACTION_COLUMNS), rows::bind_action);
            (insert.sqlite, params, sql::action_taken(chunk))
        })
        .collect();
    ActionRows { agents, chunks }
}

/// `record_actions` in the write transaction, all or none: NOT_FOUND for
/// an entry of an agent that is not there (each agent checked once),
/// CONFLICT for an id already written.
pub(crate) fn record_actions(conn: &Connection, rows: &ActionRows) -> LfResult<()> {
    for agent in &rows.agents {
        if !exists(conn, *agent)? {
            return Err(agent_not_found(*agent));
        }
    }
    for (insert, params, taken) in &rows.chunks {
        execute(conn, insert, params, || taken.clone())?;
    }
    Ok(())
}

fn exists(conn: &Connection, agent: LenserId) -> LfResult<bool> {
    let params = DirectParams::new().put(agent.as_uuid());
    Ok(first_row_of(conn, sql::AGENT_EXISTS, &params, |_| Ok(()))?.is_some())
}

/// The agent's counts of `day` (NOT_FOUND when there is no such agent).
/// SQLite's row lock is the write transaction's `BEGIN IMMEDIATE`.
fn usage_of(conn: &Connection, agent: LenserId, day: UsageDay) -> LfResult<Usage> {
    if !exists(conn, agent)? {
        return Err(agent_not_found(agent));
    }
    let params = DirectParams::new().put(agent.as_uuid()).put(day.as_days());
    Ok(first_row_of(conn, sql::USAGE, &params, |row| rows::usage(row))?.unwrap_or_default())
}

fn put_usage(conn: &Connection, agent: LenserId, day: UsageDay, after: &Usage) -> LfResult<usize> {
    let params = rows::bind_usage(DirectParams::new().put(agent.as_uuid()).put(day.as_days()), after);
    execute(conn, sql::PUT_USAGE, &params, || format!("the counts of day {} of agent {agent}", day.as_days()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use uuid::Uuid;

    use super::*;
    use crate::agent::SqlAgentStore;
    use crate::conns::Conns;
    use crate::sqlite::testing::{on_a_new_file, shown, tables_that_move_the_generation};

    /// Every agent the contract suite left, with each of its grants by id
    /// and by name and a tool it was not granted, for its owner, its
    /// members, a stranger and the service: the direct read answers as the
    /// sqlx read.
    #[tokio::test]
    async fn agent_and_grant_answers_as_the_sqlx_read() {
        let (_dir, db) = on_a_new_file().await;
        lf_agent::contract::suite(Arc::new(SqlAgentStore::new(Conns::Sqlite(db.clone())))).await;
        let agents: Vec<(Uuid, Uuid)> =
            sqlx::query_as("SELECT id, owner_id FROM agents").fetch_all(db.diagnostics_pool()).await.unwrap();
        assert!(agents.len() > 10, "the suite leaves agents behind");
        // The suite revokes what it grants: grant each agent a tool again.
        let store = SqlAgentStore::new(Conns::Sqlite(db.clone()));
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
                    let sqlx = db.snapshot(async |c| sql::agent_and_grant(c, reach, id, key).await).await;
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

    /// Every table the cached `agent_and_grant` reads (the agent, its
    /// members, its grants) moves the cached reads' generation when a row
    /// of it changes.
    #[tokio::test]
    async fn every_table_agent_and_grant_reads_moves_the_generation() {
        let (_dir, db) = on_a_new_file().await;
        let statements = [sql::GET_AGENT, sql::MEMBERS, sql::GRANT_BY_ID, sql::GRANT_BY_NAME];
        let read = tables_that_move_the_generation(&db, &statements).await;
        assert_eq!(
            read.iter().map(String::as_str).collect::<Vec<_>>(),
            ["agent_grants", "agent_members", "agents"]
        );
        db.close().await;
    }
}
