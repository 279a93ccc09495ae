//! The statements of [`lf_agent::AgentStore`] and the code that runs them,
//! the same on both backends but for the row lock ([`LOCK_AGENT`],
//! `team_sql`'s `LOCK_TEAM_RUN`) and the advisory locks PostgreSQL alone takes. The
//! store supplies the connection, the read snapshot or the write
//! transaction (see `agent/mod.rs`).
//!
//! What makes each write safe when several processes share the database:
//! - every write to an agent reads its row first, locked (SQLite: the
//!   write transaction's `BEGIN IMMEDIATE` holds the database's write lock
//!   from the first read; PostgreSQL: `SELECT … FOR NO KEY UPDATE`, which
//!   orders the writes to one agent and lets inserts that only reference it
//!   through a foreign key run beside them). What the write checks (the
//!   revision, a member or grant count, the day's usage) then stays as read
//!   until it commits: `reserve_usage` reads the day's counts, checks every
//!   ask in Rust and upserts the new counts under that lock, so of racing
//!   reservations no two pass a limit that has room for one;
//! - a creation takes, on PostgreSQL, an advisory lock on the owner (their
//!   count of active agents) and one on the handle ([`LOCK_HANDLE`]), then
//!   checks the id, the handle among agents and lensers, and the count;
//!   creating a lenser takes the same handle lock and checks the agents
//!   (`auth::sql::insert_lenser`), so a handle is one lenser's or one
//!   agent's, never both;
//! - a team run's write locks the run's row the same way and compares its
//!   status, then numbers its events on from the run's last (`team_sql`).
//!
//! Visibility ([`reach_2_3`]) is part of every read's `WHERE`.

use lf_agent::{
    ActionEntry, Agent, AgentFilter, AgentHandle, Ask, Grant, Member, Reservation, Role, StoredGrant,
    ToolKey, Usage, UsageDay, agent_moved, agent_not_found, handle_taken, too_many_agents, too_many_grants,
    too_many_members,
};
use lf_core::{LenserId, LfError, LfResult, Page, PageRequest, Reach};
use sqlx::QueryBuilder;

use super::rows::{
    action, action_columns, agent, agent_columns, bind_action, bind_agent, bind_grant, bind_member,
    bind_profile, bind_usage, grant, grant_columns, member, usage,
};
use crate::backend::Backend;
use crate::dialect::{
    Bind, Columns, Conn, Dialect, Spellings, Value, execute, insert, query, row_of, rows_of,
};
use crate::error::map_db_err;
use crate::page::listing;
use crate::reach::BindReach;

/// Whether the caller may read agent `a`: `$2` is true for a principal
/// that reads everything, `$3` the caller's lenser id otherwise: its
/// owner, co-owners and operators read it.
macro_rules! reach_2_3 {
    () => {
        "($2 OR a.owner_id = $3 OR EXISTS (SELECT 1 FROM agent_members m WHERE m.agent_id = a.id \
         AND m.lenser_id = $3))"
    };
}

/// Agent `$1`, its row locked until the transaction ends. SQLite locks no
/// rows: the write transaction's `BEGIN IMMEDIATE` already holds the
/// database's write lock.
const LOCK_AGENT: Spellings = Spellings {
    sqlite: "SELECT owner_id, revision FROM agents WHERE id = $1",
    postgres: "SELECT owner_id, revision FROM agents WHERE id = $1 FOR NO KEY UPDATE",
};
/// Serializes the creations of owner `$1`'s agents until the transaction
/// ends (PostgreSQL only: on SQLite the write transaction already holds the
/// database's write lock).
const LOCK_OWNER: &str = "SELECT pg_advisory_xact_lock(hashtextextended('agent owner ' || $1::text, 0))";
/// Serializes the creations of lensers and agents with handle `$1`
/// (PostgreSQL only).
const LOCK_HANDLE: &str = "SELECT pg_advisory_xact_lock(hashtextextended('handle ' || $1, 0))";

pub(crate) const AGENT_EXISTS: &str = "SELECT 1 AS found FROM agents WHERE id = $1";
/// Whether an agent holds handle `$1`.
pub(crate) const AGENT_HOLDS: &str = "SELECT 1 AS found FROM agents WHERE handle = $1";
/// Whether a lenser holds handle `$1`.
const LENSER_HOLDS: &str = "SELECT 1 AS found FROM lensers WHERE handle = $1";
/// Whether lenser `$1` has an account.
const LENSER_EXISTS: &str = "SELECT 1 AS found FROM lensers WHERE id = $1";
const OWNED: &str = "SELECT count(*) AS n FROM agents WHERE owner_id = $1 AND status = 'active'";
const INSERT_AGENT: &str = "INSERT INTO agents (id, handle, owner_id, display_name, bio, headline, persona, \
     model, runtime_pref, avatar_url, website_url, can_join_battles, can_vote, can_create_battles, \
     can_move_protected_labels, max_daily_battles, max_daily_votes, max_daily_team_runs, \
     max_daily_tool_calls, spending_limit_credits, status, revision, created_at, updated_at, archived_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, \
     $21, $22, $23, $24, $25)";
pub(crate) const GET_AGENT: &str =
    concat!("SELECT ", agent_columns!(), " FROM agents a WHERE a.id = $1 AND ", reach_2_3!());
const READABLE: &str = concat!("SELECT 1 AS found FROM agents a WHERE a.id = $1 AND ", reach_2_3!());
const UPDATE_AGENT: &str = "UPDATE agents SET display_name = $2, bio = $3, headline = $4, persona = $5, \
     model = $6, runtime_pref = $7, avatar_url = $8, website_url = $9, can_join_battles = $10, \
     can_vote = $11, can_create_battles = $12, can_move_protected_labels = $13, max_daily_battles = $14, \
     max_daily_votes = $15, max_daily_team_runs = $16, max_daily_tool_calls = $17, \
     spending_limit_credits = $18, status = $19, updated_at = $20, archived_at = $21, revision = $22 \
     WHERE id = $1";

macro_rules! member_columns {
    () => {
        "agent_id, lenser_id, role, added_by, added_at"
    };
}
pub(crate) const MEMBERS: &str =
    concat!("SELECT ", member_columns!(), " FROM agent_members WHERE agent_id = $1 ORDER BY added_at, seq");
const SET_ROLE: &str = "UPDATE agent_members SET role = $3 WHERE agent_id = $1 AND lenser_id = $2";
const MEMBER_COUNT: &str = "SELECT count(*) AS n FROM agent_members WHERE agent_id = $1";
const INSERT_MEMBER: &str =
    concat!("INSERT INTO agent_members (", member_columns!(), ") VALUES ($1, $2, $3, $4, $5)");
const DELETE_MEMBER: &str = "DELETE FROM agent_members WHERE agent_id = $1 AND lenser_id = $2";

pub(crate) const GRANT_BY_ID: &str =
    concat!("SELECT ", grant_columns!(), " FROM agent_grants g WHERE g.agent_id = $1 AND g.tool_id = $2");
/// The first grant (by time granted) of a tool named `$2`: a catalog
/// tool's name is unique, but a renamed tool could leave two.
pub(crate) const GRANT_BY_NAME: &str = concat!(
    "SELECT ",
    grant_columns!(),
    " FROM agent_grants g WHERE g.agent_id = $1 AND g.tool_name = $2 ORDER BY g.granted_at, g.tool_id LIMIT 1"
);
const GRANT_COUNT: &str = "SELECT count(*) AS n FROM agent_grants WHERE agent_id = $1";
const INSERT_GRANT: &str = "INSERT INTO agent_grants \
     (agent_id, tool_id, tool_name, tool_group, safety, granted_by, granted_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";
const DELETE_GRANT: &str = "DELETE FROM agent_grants WHERE agent_id = $1 AND tool_id = $2";

pub(crate) const USAGE: &str = "SELECT battles, votes, team_runs, tool_calls, credits FROM agent_usage \
     WHERE agent_id = $1 AND day = $2";
pub(crate) const PUT_USAGE: &str = "INSERT INTO agent_usage (agent_id, day, battles, votes, team_runs, tool_calls, credits) \
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (agent_id, day) DO UPDATE SET battles = excluded.battles, \
     votes = excluded.votes, team_runs = excluded.team_runs, tool_calls = excluded.tool_calls, \
     credits = excluded.credits";

const CHARGE_RUN: &str = "INSERT INTO agent_run_charges (run_id, agent_id, day, credits) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO NOTHING";

/// The most action log entries one statement inserts.
const ACTION_CHUNK: usize = 64;

/// How many columns [`action_columns`] names (each entry binds that many).
pub(crate) const ACTION_COLUMNS: usize = {
    let names = action_columns!().as_bytes();
    let (mut i, mut n) = (0, 1);
    while i < names.len() {
        if names[i] == b',' {
            n += 1;
        }
        i += 1;
    }
    n
};

/// `INSERT INTO agent_actions` of 1, 2, 4, … [`ACTION_CHUNK`] rows: a
/// batch is written in as few statements as its size's binary digits,
/// each of a text the statement caches keep. SQLite's are spelled with
/// anonymous `?`s: sqlx binds a numbered parameter by asking SQLite its
/// name, which SQLite finds by scanning every name before it, so a whole
/// chunk's numbered parameters cost more to bind than its rows to insert.
static INSERT_ACTIONS: std::sync::LazyLock<Vec<Spellings>> = std::sync::LazyLock::new(|| {
    let columns = ACTION_COLUMNS;
    let text = |rows: usize, param: &dyn Fn(usize) -> String| -> &'static str {
        let rows: Vec<String> = (0..rows)
            .map(|r| {
                let params: Vec<String> = (1..=columns).map(|c| param(r * columns + c)).collect();
                format!("({})", params.join(", "))
            })
            .collect();
        let sql = format!(
            concat!("INSERT INTO agent_actions (", action_columns!(), ") VALUES {}"),
            rows.join(", ")
        );
        Box::leak(sql.into_boxed_str())
    };
    (0..=ACTION_CHUNK.ilog2())
        .map(|k| Spellings {
            sqlite: text(1 << k, &|_| "?".to_owned()),
            postgres: text(1 << k, &|n| format!("${n}")),
        })
        .collect()
});

/// `entries` cut into chunks of 64, 32, … 1 entries, each with its
/// `INSERT INTO agent_actions` of that many rows: a statement is run and
/// reset once per chunk, not once per row.
pub(crate) fn action_chunks(
    entries: &[ActionEntry],
) -> impl Iterator<Item = (&'static Spellings, &[ActionEntry])> {
    let mut rest = entries;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let n = 1usize << rest.len().min(ACTION_CHUNK).ilog2();
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        Some((&INSERT_ACTIONS[n.ilog2() as usize], chunk))
    })
}

/// What clashed when an entry of `chunk` was written before.
pub(crate) fn action_taken(chunk: &[ActionEntry]) -> String {
    match chunk {
        [one] => format!("action log entry {} already exists", one.id),
        _ => "an action log entry of the batch already exists".to_owned(),
    }
}

fn is_postgres<C: Conn>() -> bool {
    <C::Database as Dialect>::BACKEND == Backend::Postgres
}

/// Whether the one-parameter statement `sql` answers a row for `param`.
async fn found<C: Conn, P: Value>(conn: &mut C, sql: &'static str, param: P) -> LfResult<bool> {
    Ok(row_of(conn, query(sql).put(param), |_| Ok(())).await?.is_some())
}

/// The count `sql` answers for lenser or agent `id`.
async fn count_of<C: Conn>(conn: &mut C, sql: &'static str, id: LenserId) -> LfResult<u64> {
    let n: i64 = query::<C::Database>(sql)
        .put(id.as_uuid())
        .fetch_one(conn.exec())
        .await
        .map_err(map_db_err)?
        .value("n")?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Agent `id`'s owner and revision, its row locked for the rest of the
/// transaction; NOT_FOUND when there is no such agent.
async fn lock_agent<C: Conn>(conn: &mut C, id: LenserId) -> LfResult<(LenserId, u64)> {
    let q = query(LOCK_AGENT.of::<C::Database>()).put(id.as_uuid());
    let locked = row_of(conn, q, |row| {
        let revision = row.value::<i64>("revision")?;
        Ok((LenserId::from_uuid(row.value("owner_id")?), u64::try_from(revision).unwrap_or(0)))
    });
    locked.await?.ok_or_else(|| agent_not_found(id))
}

/// NOT_FOUND unless agent `id` exists. Agents are never deleted: what
/// this finds stays there, no lock needed.
pub(super) async fn agent_exists<C: Conn>(conn: &mut C, id: LenserId) -> LfResult<()> {
    if found(conn, AGENT_EXISTS, id.as_uuid()).await? { Ok(()) } else { Err(agent_not_found(id)) }
}

/// NOT_FOUND unless the caller may read agent `id`.
pub(super) async fn readable<C: Conn>(conn: &mut C, reach: Reach, id: LenserId) -> LfResult<()> {
    let q = query(READABLE).put(id.as_uuid()).put_everything_or_me(reach);
    row_of(conn, q, |_| Ok(())).await?.ok_or_else(|| agent_not_found(id))
}

/// Takes, on PostgreSQL, the lock every creation of a lenser or an agent
/// with `handle` takes; run it in the write transaction that checks and
/// inserts. (SQLite's write transaction already holds the write lock.)
pub(crate) async fn lock_handle<C: Conn>(conn: &mut C, handle: &str) -> LfResult<()> {
    if is_postgres::<C>() {
        execute(conn, query(LOCK_HANDLE).put(handle.to_owned())).await?;
    }
    Ok(())
}

/// Whether a lenser (a person) holds `handle`.
pub(crate) async fn lenser_holds<C: Conn>(conn: &mut C, handle: &str) -> LfResult<bool> {
    found(conn, LENSER_HOLDS, handle.to_ascii_lowercase()).await
}

/// Whether lenser `id` has an account.
pub(crate) async fn lenser_exists<C: Conn>(conn: &mut C, id: LenserId) -> LfResult<bool> {
    found(conn, LENSER_EXISTS, id.as_uuid()).await
}

pub(crate) async fn create_agent<C: Conn>(conn: &mut C, a: &Agent, max_per_owner: u32) -> LfResult<()> {
    if is_postgres::<C>() {
        execute(conn, query(LOCK_OWNER).put(a.owner.as_uuid())).await?;
    }
    lock_handle(conn, a.handle.as_str()).await?;
    let exists = || LfError::conflict(format!("AI Lenser {} already exists", a.id));
    if found(conn, AGENT_EXISTS, a.id.as_uuid()).await? {
        return Err(exists());
    }
    let handle = a.handle.as_str().to_owned();
    if found(conn, AGENT_HOLDS, handle.clone()).await? || found(conn, LENSER_HOLDS, handle).await? {
        return Err(handle_taken(&a.handle));
    }
    if count_of(conn, OWNED, a.owner).await? >= u64::from(max_per_owner) {
        return Err(too_many_agents(a.owner, max_per_owner));
    }
    // Checked under the locks: a unique violation now is a caller that
    // bypassed them.
    insert(conn, bind_agent(query::<C::Database>(INSERT_AGENT), a), || {
        format!("AI Lenser {} or the handle @{} already exists", a.id, a.handle)
    })
    .await
}

/// The members of `agents`, oldest first, each with its agent.
async fn members_of<C: Conn>(conn: &mut C, agents: &[LenserId]) -> LfResult<Vec<(LenserId, Member)>> {
    match agents {
        [] => Ok(Vec::new()),
        [one] => rows_of(conn, query::<C::Database>(MEMBERS).put(one.as_uuid()), member).await,
        many => {
            let mut qb = QueryBuilder::<C::Database>::new(concat!(
                "SELECT ",
                member_columns!(),
                " FROM agent_members WHERE agent_id IN ("
            ));
            for (i, id) in many.iter().enumerate() {
                if i > 0 {
                    qb.push(", ");
                }
                <C::Database as Dialect>::push_bind(&mut qb, id.as_uuid());
            }
            qb.push(") ORDER BY added_at, seq");
            let rows = qb.build().fetch_all(conn.exec()).await.map_err(map_db_err)?;
            rows.iter().map(member).collect()
        }
    }
}

/// `agents` with their members; run it in the snapshot that read them.
async fn with_members<C: Conn>(conn: &mut C, mut agents: Vec<Agent>) -> LfResult<Vec<Agent>> {
    let ids: Vec<LenserId> = agents.iter().map(|a| a.id).collect();
    for (of, m) in members_of(conn, &ids).await? {
        if let Some(a) = agents.iter_mut().find(|a| a.id == of) {
            a.members.push(m);
        }
    }
    Ok(agents)
}

/// Agent `id` with its members; run it in a snapshot.
pub(crate) async fn get_agent<C: Conn>(conn: &mut C, reach: Reach, id: LenserId) -> LfResult<Agent> {
    let q = query(GET_AGENT).put(id.as_uuid()).put_everything_or_me(reach);
    let a = row_of(conn, q, agent).await?.ok_or_else(|| agent_not_found(id))?;
    Ok(with_members(conn, vec![a]).await?.remove(0))
}

pub(crate) async fn handle_taken_by_agent<C: Conn>(conn: &mut C, handle: &AgentHandle) -> LfResult<bool> {
    found(conn, AGENT_HOLDS, handle.as_str().to_owned()).await
}

/// The `FROM … WHERE` of `list_agents`. Its text depends only on which
/// filters are set.
fn push_agents_from<DB: Dialect>(qb: &mut QueryBuilder<DB>, reach: Reach, f: &AgentFilter) {
    qb.push(" FROM agents a WHERE ");
    qb.push(if f.include_archived { "TRUE" } else { "a.status = 'active'" });
    let held_by = |qb: &mut QueryBuilder<DB>, lenser: LenserId, role: Option<Role>| {
        let id = lenser.as_uuid();
        match role {
            None => {
                DB::push_bind(qb.push(" AND (a.owner_id = "), id);
                qb.push(
                    " OR EXISTS (SELECT 1 FROM agent_members m WHERE m.agent_id = a.id AND m.lenser_id = ",
                );
                DB::push_bind(qb, id).push("))");
            }
            Some(Role::Owner) => {
                DB::push_bind(qb.push(" AND a.owner_id = "), id);
            }
            Some(role) => {
                qb.push(
                    " AND EXISTS (SELECT 1 FROM agent_members m WHERE m.agent_id = a.id AND m.lenser_id = ",
                );
                DB::push_bind(qb, id);
                DB::push_bind(qb.push(" AND m.role = "), role.as_str().to_owned()).push(")");
            }
        }
    };
    if let Reach::Lenser(me) = reach {
        held_by(qb, me, None);
    }
    // A role without a lenser filters nothing (as the in-memory store).
    if let Some(lenser) = f.lenser {
        held_by(qb, lenser, f.role);
    }
}

/// A page of agents with their members, newest first; run it in a snapshot.
pub(crate) async fn list_agents<C: Conn>(
    conn: &mut C,
    reach: Reach,
    filter: &AgentFilter,
    page: PageRequest,
) -> LfResult<Page<Agent>> {
    let select = concat!("SELECT ", agent_columns!());
    let from = |qb: &mut QueryBuilder<C::Database>| push_agents_from(qb, reach, filter);
    let found = listing(conn, select, from, " ORDER BY a.created_at DESC, a.id DESC", page, agent).await?;
    let items = with_members(conn, found.items).await?;
    Ok(Page { items, ..found })
}

pub(crate) async fn update_agent<C: Conn>(conn: &mut C, a: &Agent, expected_revision: u64) -> LfResult<()> {
    let (_, revision) = lock_agent(conn, a.id).await?;
    if revision != expected_revision {
        return Err(agent_moved(a.id));
    }
    let q = bind_profile(query::<C::Database>(UPDATE_AGENT).put(a.id.as_uuid()), a)
        .put_time(a.updated_at)
        .put_opt_time(a.archived_at)
        .put(super::rows::stored_count(expected_revision + 1));
    execute(conn, q).await?;
    Ok(())
}

pub(crate) async fn put_member<C: Conn>(
    conn: &mut C,
    agent: LenserId,
    m: &Member,
    max_members: u32,
) -> LfResult<bool> {
    let (owner, _) = lock_agent(conn, agent).await?;
    if m.lenser == owner || m.role == Role::Owner {
        return Err(LfError::conflict(format!(
            "AI Lenser {agent} has one owner, {owner}; the owner is not added as a member, and no member becomes owner."
        )));
    }
    let q = query(SET_ROLE).put(agent.as_uuid()).put(m.lenser.as_uuid()).put(m.role.as_str().to_owned());
    if execute(conn, q).await? > 0 {
        return Ok(false);
    }
    if count_of(conn, MEMBER_COUNT, agent).await? >= u64::from(max_members) {
        return Err(too_many_members(agent, max_members));
    }
    let q = bind_member(query::<C::Database>(INSERT_MEMBER), agent, m);
    insert(conn, q, || format!("lenser {} is already a member of AI Lenser {agent}", m.lenser)).await?;
    Ok(true)
}

pub(crate) async fn remove_member<C: Conn>(
    conn: &mut C,
    agent: LenserId,
    lenser: LenserId,
) -> LfResult<bool> {
    lock_agent(conn, agent).await?;
    Ok(execute(conn, query(DELETE_MEMBER).put(agent.as_uuid()).put(lenser.as_uuid())).await? > 0)
}

/// The agent's grant of the tool `tool` names.
async fn grant_of<C: Conn>(conn: &mut C, agent: LenserId, tool: &ToolKey) -> LfResult<Option<Grant>> {
    let q = match tool {
        ToolKey::Id(id) => query::<C::Database>(GRANT_BY_ID).put(agent.as_uuid()).put(id.as_uuid()),
        ToolKey::Name(name) => {
            query::<C::Database>(GRANT_BY_NAME).put(agent.as_uuid()).put(name.as_str().to_owned())
        }
    };
    row_of(conn, q, grant).await
}

pub(crate) async fn put_grant<C: Conn>(conn: &mut C, g: &Grant, max_grants: u32) -> LfResult<StoredGrant> {
    lock_agent(conn, g.agent).await?;
    if let Some(first) = grant_of(conn, g.agent, &ToolKey::Id(g.tool.id)).await? {
        return Ok(StoredGrant { grant: first, created: false });
    }
    if count_of(conn, GRANT_COUNT, g.agent).await? >= u64::from(max_grants) {
        return Err(too_many_grants(g.agent, max_grants));
    }
    insert(conn, bind_grant(query::<C::Database>(INSERT_GRANT), g), || {
        format!("AI Lenser {} already holds tool {}", g.agent, g.tool.id)
    })
    .await?;
    Ok(StoredGrant { grant: g.clone(), created: true })
}

/// A listing of one agent's rows: `select` them `of` a table, its
/// condition on the agent's id last (the agent is bound there).
pub(super) struct AgentRows {
    pub(super) select: &'static str,
    pub(super) of: &'static str,
}

impl AgentRows {
    /// The page of agent `agent`'s rows that `more` narrows (conditions
    /// starting with ` AND`), in `order`.
    pub(super) async fn page<C: Conn, T>(
        &self,
        conn: &mut C,
        agent: LenserId,
        more: impl Fn(&mut QueryBuilder<C::Database>),
        order: &'static str,
        page: PageRequest,
        from_row: fn(&<C::Database as sqlx::Database>::Row) -> LfResult<T>,
    ) -> LfResult<Page<T>> {
        let from = |qb: &mut QueryBuilder<C::Database>| {
            <C::Database as Dialect>::push_bind(qb.push(self.of), agent.as_uuid());
            more(qb);
        };
        listing(conn, self.select, from, order, page, from_row).await
    }
}

/// Agent `id` with its members and its grant of `tool`; run it in a
/// snapshot.
pub(crate) async fn agent_and_grant<C: Conn>(
    conn: &mut C,
    reach: Reach,
    id: LenserId,
    tool: &ToolKey,
) -> LfResult<(Agent, Option<Grant>)> {
    let agent = get_agent(conn, reach, id).await?;
    Ok((agent, grant_of(conn, id, tool).await?))
}

/// Run it in a snapshot.
pub(crate) async fn list_grants<C: Conn>(
    conn: &mut C,
    reach: Reach,
    agent: LenserId,
    page: PageRequest,
) -> LfResult<Page<Grant>> {
    readable(conn, reach, agent).await?;
    let rows = AgentRows {
        select: concat!("SELECT ", grant_columns!()),
        of: " FROM agent_grants g WHERE g.agent_id = ",
    };
    rows.page(conn, agent, |_| {}, " ORDER BY g.tool_name, g.tool_id", page, grant).await
}

pub(crate) async fn revoke_grant<C: Conn>(
    conn: &mut C,
    agent: LenserId,
    tool: &ToolKey,
) -> LfResult<Option<Grant>> {
    lock_agent(conn, agent).await?;
    let Some(g) = grant_of(conn, agent, tool).await? else { return Ok(None) };
    execute(conn, query(DELETE_GRANT).put(agent.as_uuid()).put(g.tool.id.as_uuid())).await?;
    Ok(Some(g))
}

/// The agent's counts of `day` (zero without a row).
async fn usage_of<C: Conn>(conn: &mut C, agent: LenserId, day: UsageDay) -> LfResult<Usage> {
    let q = query(USAGE).put(agent.as_uuid()).put(day.as_days());
    Ok(row_of(conn, q, usage).await?.unwrap_or_default())
}

/// What `asks` make of `used`: the new counts, or the first ask that does
/// not fit. Asks of one kind add up; a count the databases cannot hold
/// (past `i64::MAX`) does not fit either.
pub(crate) fn reserve(used: Usage, asks: &[Ask]) -> Reservation {
    let mut after = used;
    for ask in asks {
        match after.get(ask.kind).checked_add(ask.amount) {
            Some(n) if n <= ask.limit && i64::try_from(n).is_ok() => *after.get_mut(ask.kind) = n,
            _ => {
                return Reservation::Refused {
                    kind: ask.kind,
                    used: used.get(ask.kind),
                    asked: ask.amount,
                    limit: ask.limit,
                };
            }
        }
    }
    Reservation::Reserved(after)
}

/// Checks and counts in the write transaction, the agent's row locked:
/// all asks or none.
pub(crate) async fn reserve_usage<C: Conn>(
    conn: &mut C,
    agent: LenserId,
    day: UsageDay,
    asks: &[Ask],
) -> LfResult<Reservation> {
    lock_agent(conn, agent).await?;
    let used = usage_of(conn, agent, day).await?;
    let out = reserve(used, asks);
    if let Reservation::Reserved(after) = &out
        && after != &used
    {
        let q = bind_usage(query::<C::Database>(PUT_USAGE).put(agent.as_uuid()).put(day.as_days()), after);
        execute(conn, q).await?;
    }
    Ok(out)
}

/// Gives back in the write transaction, the agent's row locked. (SQLite's
/// store runs this, [`reserve_usage`] and [`record_actions`] on its direct
/// writer: `sqlite_direct`, with the same statements and rules.)
pub(crate) async fn release_usage<C: Conn>(
    conn: &mut C,
    agent: LenserId,
    day: UsageDay,
    units: &Usage,
) -> LfResult<()> {
    lock_agent(conn, agent).await?;
    let used = usage_of(conn, agent, day).await?;
    let after = used.saturating_sub(*units);
    if after != used {
        let q = bind_usage(query::<C::Database>(PUT_USAGE).put(agent.as_uuid()).put(day.as_days()), &after);
        execute(conn, q).await?;
    }
    Ok(())
}

/// Charges a run's spend in the write transaction, the agent's row locked:
/// the run's row in `agent_run_charges` is what makes it once.
pub(crate) async fn charge_run<C: Conn>(
    conn: &mut C,
    agent: LenserId,
    day: UsageDay,
    run: lf_core::RunId,
    credits: u64,
) -> LfResult<bool> {
    lock_agent(conn, agent).await?;
    let q = query(CHARGE_RUN)
        .put(run.as_uuid())
        .put(agent.as_uuid())
        .put(day.as_days())
        .put(super::rows::stored_count(credits));
    if execute(conn, q).await? == 0 {
        return Ok(false);
    }
    let used = usage_of(conn, agent, day).await?;
    let after = Usage { credits: used.credits.saturating_add(credits), ..used };
    if after != used {
        let q = bind_usage(query::<C::Database>(PUT_USAGE).put(agent.as_uuid()).put(day.as_days()), &after);
        execute(conn, q).await?;
    }
    Ok(true)
}

/// Run it in a snapshot.
pub(crate) async fn usage_for<C: Conn>(
    conn: &mut C,
    reach: Reach,
    agent: LenserId,
    day: UsageDay,
) -> LfResult<Usage> {
    readable(conn, reach, agent).await?;
    usage_of(conn, agent, day).await
}

/// All or none: run it in the write transaction. Each agent's existence
/// is checked once.
pub(crate) async fn record_actions<C: Conn>(conn: &mut C, entries: &[ActionEntry]) -> LfResult<()> {
    let mut checked = std::collections::HashSet::new();
    for e in entries {
        if checked.insert(e.agent) {
            agent_exists(conn, e.agent).await?;
        }
    }
    for (insert_chunk, chunk) in action_chunks(entries) {
        let mut q = query::<C::Database>(insert_chunk.of::<C::Database>());
        for e in chunk {
            q = bind_action(q, e);
        }
        insert(conn, q, || action_taken(chunk)).await?;
    }
    Ok(())
}

/// Run it in a snapshot.
pub(crate) async fn list_actions<C: Conn>(
    conn: &mut C,
    reach: Reach,
    agent: LenserId,
    page: PageRequest,
) -> LfResult<Page<ActionEntry>> {
    readable(conn, reach, agent).await?;
    let rows = AgentRows {
        select: concat!("SELECT ", action_columns!()),
        of: " FROM agent_actions WHERE agent_id = ",
    };
    rows.page(conn, agent, |_| {}, " ORDER BY at DESC, id DESC", page, action).await
}
