//! The statements of [`lf_workflow::ConnectionStore`] and the code that
//! runs them, the same on both backends. Every statement names the owner:
//! no statement reads another owner's rows. Refs sort as bytes on both
//! (SQLite's BINARY collation; the column's `"C"` collation on
//! PostgreSQL).

use lf_core::{LenserId, LfResult, Timestamp};
use lf_workflow::connection::ConnectionTool;
use lf_workflow::connection::{connection_not_found, connection_taken};
use lf_workflow::{Connection, ConnectionRef, SealedSecret};

use super::rows::{bind_connection, connection, tools_of, tools_text};
use crate::dialect::{Bind, Columns, Conn, all_rows, execute, query, row_of};
use crate::error::conflict_or;

const INSERT: &str = "INSERT INTO connections \
     (owner_id, connection_ref, provider, settings, sealed_secret, created_at) VALUES ($1, $2, $3, $4, $5, $6)";
const LIST: &str = "SELECT owner_id, connection_ref, provider, settings, created_at FROM connections \
     WHERE owner_id = $1 ORDER BY connection_ref";
const WITH_SECRET: &str = "SELECT owner_id, connection_ref, provider, settings, created_at, sealed_secret \
     FROM connections WHERE owner_id = $1 AND connection_ref = $2";
const REMOVE: &str = "DELETE FROM connections WHERE owner_id = $1 AND connection_ref = $2";
// The connection's row joined to its tools: no row when there is no
// connection, '[]' when it has no tools.
const TOOLS: &str = "SELECT COALESCE(t.tools, '[]') AS tools FROM connections c \
     LEFT JOIN connection_tools t ON t.owner_id = c.owner_id AND t.connection_ref = c.connection_ref \
     WHERE c.owner_id = $1 AND c.connection_ref = $2";
// Writes only beside a connection of the owner's (no row written: NOT_FOUND).
const PUT_TOOLS: &str = "INSERT INTO connection_tools (owner_id, connection_ref, tools, listed_at) \
     SELECT c.owner_id, c.connection_ref, $3, $4 FROM connections c \
     WHERE c.owner_id = $1 AND c.connection_ref = $2 \
     ON CONFLICT (owner_id, connection_ref) DO UPDATE SET tools = excluded.tools, listed_at = excluded.listed_at";

pub(crate) async fn add<C: Conn>(conn: &mut C, c: &Connection, secret: &SealedSecret) -> LfResult<()> {
    let q = bind_connection(query::<C::Database>(INSERT), c, secret.as_bytes());
    q.execute(conn.exec()).await.map_err(conflict_or(|| connection_taken(&c.connection_ref)))?;
    Ok(())
}

pub(crate) async fn list<C: Conn>(conn: &mut C, owner: LenserId) -> LfResult<Vec<Connection>> {
    all_rows(conn, LIST, owner.as_uuid(), connection).await
}

pub(crate) async fn with_secret<C: Conn>(
    conn: &mut C,
    owner: LenserId,
    r: &ConnectionRef,
) -> LfResult<(Connection, SealedSecret)> {
    let q = query(WITH_SECRET).put(owner.as_uuid()).put(r.as_str().to_owned());
    let found =
        row_of(conn, q, |row| Ok((connection(row)?, SealedSecret::from_bytes(row.value("sealed_secret")?))));
    found.await?.ok_or_else(|| connection_not_found(r))
}

pub(crate) async fn remove<C: Conn>(conn: &mut C, owner: LenserId, r: &ConnectionRef) -> LfResult<()> {
    let removed = execute(conn, query(REMOVE).put(owner.as_uuid()).put(r.as_str().to_owned())).await?;
    if removed == 0 {
        return Err(connection_not_found(r));
    }
    Ok(())
}

pub(crate) async fn tools<C: Conn>(
    conn: &mut C,
    owner: LenserId,
    r: &ConnectionRef,
) -> LfResult<Vec<ConnectionTool>> {
    let q = query(TOOLS).put(owner.as_uuid()).put(r.as_str().to_owned());
    let found = row_of(conn, q, |row| tools_of(row.text("tools")?));
    found.await?.ok_or_else(|| connection_not_found(r))
}

pub(crate) async fn put_tools<C: Conn>(
    conn: &mut C,
    owner: LenserId,
    r: &ConnectionRef,
    tools: &[ConnectionTool],
    at: Timestamp,
) -> LfResult<()> {
    let q =
        query(PUT_TOOLS).put(owner.as_uuid()).put(r.as_str().to_owned()).put(tools_text(tools)).put_time(at);
    if execute(conn, q).await? == 0 {
        return Err(connection_not_found(r));
    }
    Ok(())
}
