//! The writes that bypass sqlx (see [`super::Handle::write_direct`] for
//! why): the day's counts and the action log of an agent's calls, which
//! every call writes or its server's ledger writes for it every few
//! milliseconds. Each runs its store's statements, as SQLite spells them,
//! on the direct writer in the writer's turn, binds with the store's own
//! row functions and decides with its own rules (`agent::sql`), so that both
//! paths write alike; the agent store's contract suite runs over this path
//! on SQLite and over sqlx on PostgreSQL.

use std::collections::HashSet;

use lf_agent::{ActionEntry, Ask, Reservation, Usage, UsageDay, agent_not_found};
use lf_core::{LenserId, LfResult};
use rusqlite::Connection;

use super::direct::{DirectParams, DirectRow, execute, first_row_of};
use crate::agent::{rows, sql};
use crate::dialect::Bind;

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

/// `record_actions` in the write transaction, all or none: NOT_FOUND for
/// an entry of an agent that is not there (each agent checked once),
/// CONFLICT for an id already written.
pub(crate) fn record_actions(conn: &Connection, entries: &[ActionEntry]) -> LfResult<()> {
    let mut checked = HashSet::new();
    for e in entries {
        if checked.insert(e.agent) && !exists(conn, e.agent)? {
            return Err(agent_not_found(e.agent));
        }
    }
    for (insert_chunk, chunk) in sql::action_chunks(entries) {
        let params = chunk.iter().fold(DirectParams::new(), rows::bind_action);
        execute(conn, insert_chunk.sqlite, &params, || sql::action_taken(chunk))?;
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
    Ok(first_row_of(conn, sql::USAGE, &params, |row| rows::usage(&DirectRow(row)))?.unwrap_or_default())
}

fn put_usage(conn: &Connection, agent: LenserId, day: UsageDay, after: &Usage) -> LfResult<usize> {
    let params = rows::bind_usage(DirectParams::new().put(agent.as_uuid()).put(day.as_days()), after);
    execute(conn, sql::PUT_USAGE, &params, || format!("the counts of day {} of agent {agent}", day.as_days()))
}
