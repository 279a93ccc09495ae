//! The storage contract of saved connections. Implementations:
//! [`crate::MemoryConnections`] here, SQLite and PostgreSQL in lf-store.
//! All of them run [`super::contract::suite`].

use async_trait::async_trait;
use lf_core::{LenserId, LfResult, Timestamp};

use super::model::{Connection, SealedSecret};
use super::tools::{ConnectionTool, ToolMode};
use crate::lookup::{ConnectionLookup, SavedConnection};
use crate::model::ConnectionRef;

/// Where saved connections and their sealed secrets live.
///
/// A connection is its owner's alone: every method names the owner, and
/// no method reads another owner's rows. A store keeps the sealed secret
/// as the bytes it was given and returns it from
/// [`ConnectionStore::connection_secret`] only; listings never carry it.
/// Settings are read back as written (JSON objects with their key order).
///
/// Errors every implementation MUST return (other failures are INTERNAL):
/// - CONFLICT from [`ConnectionStore::add_connection`] when the owner
///   already has a connection of that ref, its message naming the ref
///   ([`super::connection_taken`]); then nothing is written.
/// - NOT_FOUND from [`ConnectionStore::connection_secret`] and
///   [`ConnectionStore::remove_connection`] when the owner has no
///   connection of that ref ([`super::connection_not_found`]).
#[async_trait]
pub trait ConnectionStore: Send + Sync {
    /// Stores `connection` and its sealed `secret`.
    async fn add_connection(&self, connection: &Connection, secret: &SealedSecret) -> LfResult<()>;

    /// The owner's connections, sorted by ref (byte order), without
    /// secrets. Empty when there are none.
    async fn list_connections(&self, owner: LenserId) -> LfResult<Vec<Connection>>;

    /// The connection and its sealed secret, for the runner.
    async fn connection_secret(
        &self,
        owner: LenserId,
        connection_ref: &ConnectionRef,
    ) -> LfResult<(Connection, SealedSecret)>;

    /// Removes the connection, its secret and its tools.
    async fn remove_connection(&self, owner: LenserId, connection_ref: &ConnectionRef) -> LfResult<()>;

    /// The tools saved with the connection (an outside MCP server's), in
    /// the order written; empty when none were. NOT_FOUND when the owner
    /// has no connection of that ref.
    async fn connection_tools(
        &self,
        owner: LenserId,
        connection_ref: &ConnectionRef,
    ) -> LfResult<Vec<ConnectionTool>>;

    /// Replaces the connection's tools, listed at `at`. NOT_FOUND when the
    /// owner has no connection of that ref.
    async fn put_connection_tools(
        &self,
        owner: LenserId,
        connection_ref: &ConnectionRef,
        tools: &[ConnectionTool],
        at: Timestamp,
    ) -> LfResult<()>;
}

/// Every connection store answers the workflow service's question, through
/// its listing: a lenser saves a handful of connections.
#[async_trait]
impl<S: ConnectionStore + ?Sized> ConnectionLookup for S {
    async fn saved(&self, owner: LenserId, refs: &[String]) -> LfResult<Vec<SavedConnection>> {
        let all = self.list_connections(owner).await?;
        Ok(all
            .into_iter()
            .filter(|c| refs.iter().any(|r| r == c.connection_ref.as_str()))
            .map(|c| SavedConnection {
                connection_ref: c.connection_ref.as_str().to_owned(),
                provider: c.provider.as_str().to_owned(),
            })
            .collect())
    }

    async fn saved_tools(&self, owner: LenserId, connection_ref: &str) -> LfResult<Vec<(String, ToolMode)>> {
        let r = ConnectionRef::parse("connection_ref", connection_ref)?;
        let tools = self.connection_tools(owner, &r).await?;
        Ok(tools.into_iter().map(|t| (t.tool.name, t.mode)).collect())
    }
}
