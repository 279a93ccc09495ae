//! [`ConnectionStore`] over either backend: the `connections` table of
//! `0007_workflows.sql` (SQLite) and `0006_workflows.sql` (PostgreSQL), and
//! `connection_tools` of `0029_connection_tools.sql` / `0025_…`,
//! keyed by owner and ref, through the statements of `sql`, the same on
//! both. Every method is one statement (see [`crate::conns`]); the sealed
//! secret is read by `connection_secret` only.

pub(crate) mod rows;
pub(crate) mod sql;

use async_trait::async_trait;
use lf_core::{LenserId, LfResult, Timestamp};
use lf_workflow::connection::ConnectionTool;
use lf_workflow::{Connection, ConnectionRef, ConnectionStore, SealedSecret};

use crate::conns::{Conns, on};

/// [`ConnectionStore`] over either backend.
pub(crate) struct SqlConnectionStore {
    conns: Conns,
}

impl SqlConnectionStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

#[async_trait]
impl ConnectionStore for SqlConnectionStore {
    async fn add_connection(&self, connection: &Connection, secret: &SealedSecret) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::add(conn, connection, secret))
    }

    async fn list_connections(&self, owner: LenserId) -> LfResult<Vec<Connection>> {
        on!(&self.conns, reading, |conn| sql::list(conn, owner))
    }

    async fn connection_secret(
        &self,
        owner: LenserId,
        connection_ref: &ConnectionRef,
    ) -> LfResult<(Connection, SealedSecret)> {
        on!(&self.conns, reading, |conn| sql::with_secret(conn, owner, connection_ref))
    }

    async fn remove_connection(&self, owner: LenserId, connection_ref: &ConnectionRef) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::remove(conn, owner, connection_ref))
    }

    async fn connection_tools(
        &self,
        owner: LenserId,
        connection_ref: &ConnectionRef,
    ) -> LfResult<Vec<ConnectionTool>> {
        on!(&self.conns, reading, |conn| sql::tools(conn, owner, connection_ref))
    }

    async fn put_connection_tools(
        &self,
        owner: LenserId,
        connection_ref: &ConnectionRef,
        tools: &[ConnectionTool],
        at: Timestamp,
    ) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::put_tools(conn, owner, connection_ref, tools, at))
    }
}
