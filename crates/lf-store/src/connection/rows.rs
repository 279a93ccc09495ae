//! `connections` rows, as both backends read and write them (see the
//! `0007_workflows.sql` / `0006_workflows.sql` migrations): settings are
//! JSON text, the sealed secret bytes. Reading back is strict, as for
//! workflows.

use lf_core::{LenserId, LfResult};
use lf_workflow::connection::ConnectionTool;
use lf_workflow::{Connection, ConnectionRef, Provider};

use crate::dialect::{Bind, Columns};
use crate::workflow::rows::{object, object_text, valid};

/// A `connections` row without its secret, as `connection::sql` selects it.
pub(crate) fn connection(row: &impl Columns) -> LfResult<Connection> {
    Ok(Connection {
        owner: LenserId::from_uuid(row.value("owner_id")?),
        connection_ref: valid(
            ConnectionRef::parse("connection_ref", row.text("connection_ref")?),
            "connections.connection_ref",
        )?,
        provider: valid(Provider::parse("provider", row.text("provider")?), "connections.provider")?,
        settings: object(row.text("settings")?, "connections.settings")?,
        created_at: row.time("created_at")?,
    })
}

/// Binds a `connections` row, its sealed secret included, in the order of
/// `connection::sql::INSERT`.
pub(crate) fn bind_connection<Q: Bind>(q: Q, c: &Connection, sealed: &[u8]) -> Q {
    q.put(c.owner.as_uuid())
        .put(c.connection_ref.as_str().to_owned())
        .put(c.provider.as_str().to_owned())
        .put(object_text(&c.settings))
        .put(sealed.to_vec())
        .put_time(c.created_at)
}

/// A `connection_tools.tools` column: the JSON array lf-workflow writes.
pub(crate) fn tools_of(text: &str) -> LfResult<Vec<ConnectionTool>> {
    valid(serde_json::from_str(text), "connection_tools.tools")
}

/// The `connection_tools.tools` text of `tools`.
pub(crate) fn tools_text(tools: &[ConnectionTool]) -> String {
    serde_json::to_string(tools).unwrap_or_else(|_| "[]".to_owned())
}
