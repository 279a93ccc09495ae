//! The saved-connection use cases. A connection is always the caller's
//! own: the lenser a principal speaks for (a Service principal's acting
//! lenser), never anyone else's.

use std::sync::Arc;

use lf_core::{Clock, LenserId, LfError, LfResult, Principal, SystemClock};

use super::model::{Connection, SealBinding, Secret, SecretSealer, parse_provider, parse_settings};
use super::store::ConnectionStore;
use super::tools::{
    ConnectionTool, MCP_PROVIDER, McpServers, ToolMode, mcp_endpoint, mcp_settings, merge_tools,
};
use crate::model::{ConnectionRef, JsonObject};

/// A connection to save, as given (checked by [`ConnectionService::add`]).
#[derive(Debug)]
pub struct NewConnection {
    pub provider: String,
    pub connection_ref: String,
    pub settings: JsonObject,
    pub secret: Secret,
}

/// Saves, lists and removes a lenser's connections, sealing each secret
/// with the [`SecretSealer`] before it reaches the store.
#[derive(Clone)]
pub struct ConnectionService {
    store: Arc<dyn ConnectionStore>,
    sealer: Arc<dyn SecretSealer>,
    clock: Arc<dyn Clock>,
    mcp: Option<Arc<dyn McpServers>>,
}

fn parse_ref(s: &str) -> LfResult<ConnectionRef> {
    ConnectionRef::parse("ref", s)
}

impl ConnectionService {
    pub fn new(store: Arc<dyn ConnectionStore>, sealer: Arc<dyn SecretSealer>) -> Self {
        Self { store, sealer, clock: Arc::new(SystemClock), mcp: None }
    }

    /// Speaks to outside MCP servers through `mcp`: without it, a
    /// connection of provider `mcp` cannot be saved.
    pub fn with_mcp(mut self, mcp: Arc<dyn McpServers>) -> Self {
        self.mcp = Some(mcp);
        self
    }

    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn store(&self) -> &Arc<dyn ConnectionStore> {
        &self.store
    }

    /// Saves a connection of the caller's: its ref (the blueprint's rule
    /// for `connection_ref`), provider and settings checked, its secret
    /// sealed. INVALID_ARGUMENT for bad input, CONFLICT when the caller
    /// already has that ref, MISSING_LENSER for a principal that speaks for
    /// nobody. Nothing is written unless all of it passes.
    ///
    /// A connection of provider `mcp` (an outside MCP server; its secret
    /// may be [`Secret::empty`]) is saved only once its server answered
    /// the handshake and listed its tools, which are saved with it: a
    /// server that does not answer, is not MCP or refuses the credentials
    /// is the error of [`McpServers::list_tools`], and nothing is saved.
    pub async fn add(&self, p: &Principal, new: NewConnection) -> LfResult<Connection> {
        let owner = p.owner_for_create()?;
        let connection = Connection {
            owner,
            connection_ref: parse_ref(&new.connection_ref)?,
            provider: parse_provider(&new.provider)?,
            settings: parse_settings(new.settings)?,
            created_at: self.clock.now(),
        };
        let is_mcp = connection.provider.as_str() == MCP_PROVIDER;
        if new.secret.expose().is_empty() && !is_mcp {
            Secret::new(Vec::new())?; // the error of a missing secret
        }
        let tools = if is_mcp {
            let (.., new_tools) = mcp_settings(&connection.settings)?;
            let endpoint = mcp_endpoint(&connection, Some(new.secret.clone_secret()))?;
            Some(merge_tools(&[], self.mcp()?.list_tools(&endpoint).await?, new_tools))
        } else {
            None
        };
        let sealed = self
            .sealer
            .seal(&new.secret, SealBinding { owner, connection_ref: &connection.connection_ref })?;
        self.store.add_connection(&connection, &sealed).await?;
        if let Some(tools) = tools {
            let put = self.store.put_connection_tools(
                owner,
                &connection.connection_ref,
                &tools,
                connection.created_at,
            );
            if let Err(e) = put.await {
                // Nothing saved: a connection without its tools is not kept.
                let _ = self.store.remove_connection(owner, &connection.connection_ref).await;
                return Err(e);
            }
        }
        Ok(connection)
    }

    fn mcp(&self) -> LfResult<&Arc<dyn McpServers>> {
        self.mcp.as_ref().ok_or_else(|| {
            LfError::new(lf_core::ErrorCode::Internal, "this server was built without an MCP client")
        })
    }

    /// The caller's `mcp` connection `connection_ref`. NOT_FOUND when
    /// there is none; INVALID_ARGUMENT when it is of another provider.
    async fn mcp_connection(&self, owner: LenserId, connection_ref: &str) -> LfResult<(Connection, Secret)> {
        let (connection, secret) = self.open_secret(owner, connection_ref).await?;
        if connection.provider.as_str() != MCP_PROVIDER {
            return Err(LfError::invalid_argument(format!(
                "{} is a {} connection, not an outside MCP server's (provider mcp).",
                LfError::excerpt(connection_ref),
                connection.provider
            ))
            .with_field("connection_ref"));
        }
        Ok((connection, secret))
    }

    /// Lists the server's tools again and saves them: tools it still lists
    /// keep their modes, new ones start as [`super::first_mode`] says,
    /// those it no longer lists are dropped. Errors as [`Self::add`]'s;
    /// then the saved tools stay as they were.
    pub async fn refresh_tools(&self, p: &Principal, connection_ref: &str) -> LfResult<Vec<ConnectionTool>> {
        let owner = p.owner_for_create()?;
        let (connection, secret) = self.mcp_connection(owner, connection_ref).await?;
        let (.., new_tools) = mcp_settings(&connection.settings)?;
        let listed = self.mcp()?.list_tools(&mcp_endpoint(&connection, Some(secret))?).await?;
        let saved = self.store.connection_tools(owner, &connection.connection_ref).await?;
        let tools = merge_tools(&saved, listed, new_tools);
        self.store.put_connection_tools(owner, &connection.connection_ref, &tools, self.clock.now()).await?;
        Ok(tools)
    }

    /// The tools saved with the caller's `mcp` connection, with their modes.
    pub async fn tools(&self, p: &Principal, connection_ref: &str) -> LfResult<Vec<ConnectionTool>> {
        self.tools_of(p.owner_for_create()?, connection_ref).await
    }

    /// The tools saved with `owner`'s connection, for the runner and the
    /// validator. NOT_FOUND when there is no such connection.
    pub async fn tools_of(&self, owner: LenserId, connection_ref: &str) -> LfResult<Vec<ConnectionTool>> {
        self.store.connection_tools(owner, &parse_ref(connection_ref)?).await
    }

    /// Calls `tool` of `owner`'s `mcp` connection `connection_ref` with
    /// `arguments` (see [`McpServers::call_tool`]): the tool as saved and
    /// the output. NOT_FOUND when there is no such connection or tool;
    /// PERMISSION_DENIED when the tool is `off`. Whether an `ask` tool's
    /// call was approved is the caller's to know.
    pub async fn call_tool(
        &self,
        owner: LenserId,
        connection_ref: &str,
        tool: &str,
        arguments: serde_json::Value,
    ) -> LfResult<(ConnectionTool, serde_json::Value)> {
        let (connection, secret) = self.mcp_connection(owner, connection_ref).await?;
        let tools = self.store.connection_tools(owner, &connection.connection_ref).await?;
        let Some(found) = tools.into_iter().find(|t| t.tool.name == tool) else {
            return Err(no_tool(connection_ref, tool));
        };
        if found.mode == ToolMode::Off {
            return Err(LfError::permission_denied(format!(
                "The tool {} of {} is off: it is never called. Its owner turns it on with set_connection_tool_mode.",
                LfError::excerpt(tool),
                LfError::excerpt(connection_ref)
            ))
            .with_field("tool"));
        }
        let endpoint = mcp_endpoint(&connection, Some(secret))?;
        let output = self.mcp()?.call_tool(&endpoint, &found, arguments).await?;
        Ok((found, output))
    }

    /// Sets one tool's mode. NOT_FOUND when the connection has no tool of
    /// that name (listing them again may find it).
    pub async fn set_tool_mode(
        &self,
        p: &Principal,
        connection_ref: &str,
        tool: &str,
        mode: ToolMode,
    ) -> LfResult<ConnectionTool> {
        let owner = p.owner_for_create()?;
        let r = parse_ref(connection_ref)?;
        let mut tools = self.store.connection_tools(owner, &r).await?;
        let Some(found) = tools.iter_mut().find(|t| t.tool.name == tool) else {
            return Err(no_tool(connection_ref, tool));
        };
        found.mode = mode;
        let changed = found.clone();
        self.store.put_connection_tools(owner, &r, &tools, self.clock.now()).await?;
        Ok(changed)
    }

    /// The caller's connections, sorted by ref; never a secret.
    pub async fn list(&self, p: &Principal) -> LfResult<Vec<Connection>> {
        self.store.list_connections(p.owner_for_create()?).await
    }

    /// Removes a connection of the caller's. NOT_FOUND when there is none
    /// of that ref. Workflows naming it stay as they are; their validation
    /// reports CONNECTION_UNKNOWN until it is saved again.
    pub async fn remove(&self, p: &Principal, connection_ref: &str) -> LfResult<()> {
        let owner = p.owner_for_create()?;
        self.store.remove_connection(owner, &parse_ref(connection_ref)?).await
    }

    /// The connection `connection_ref` of `owner` and its secret in clear,
    /// for the runner executing a workflow of `owner`'s; never for a tool.
    /// NOT_FOUND when there is no such connection; the sealer's error when
    /// the secret does not open with this server's key.
    pub async fn open_secret(&self, owner: LenserId, connection_ref: &str) -> LfResult<(Connection, Secret)> {
        let r = parse_ref(connection_ref)?;
        let (connection, sealed) = self.store.connection_secret(owner, &r).await?;
        let secret = self.sealer.open(&sealed, SealBinding { owner, connection_ref: &r })?;
        Ok((connection, secret))
    }
}

/// NOT_FOUND: the connection has no tool named `tool`.
fn no_tool(connection_ref: &str, tool: &str) -> LfError {
    LfError::new(
        lf_core::ErrorCode::NotFound,
        format!(
            "The connection {} has no tool named {}. See its tools with list_connection_tools, or list them again with refresh_connection_tools.",
            LfError::excerpt(connection_ref),
            LfError::excerpt(tool)
        ),
    )
    .with_field("tool")
}
