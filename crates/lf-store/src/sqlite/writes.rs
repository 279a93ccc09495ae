//! The writes that bypass sqlx (see [`super::Handle::write_direct`] for
//! why): the day's counts and the action log of an agent's calls, which
//! every call writes or its server's ledger writes for it every few
//! milliseconds. Each runs its store's statements, as SQLite spells them,
//! on the direct writer in the writer's turn, binds with the store's own
//! row functions and decides with its own rules (`agent::sql`), so that both
//! paths write alike; the agent store's contract suite runs over this path
//! on SQLite and over sqlx on PostgreSQL.

use std::collections::HashSet;

use super::{Connection, DirectParams, execute, first_row_of};
use crate::agent::{rows, sql};
use crate::dialect::Bind;
use lf_agent::{ActionEntry, Ask, Reservation, Usage, UsageDay, agent_not_found};
use lf_core::{LenserId, LfResult};

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
