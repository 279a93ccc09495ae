//! The saved-connection use cases. A connection is always the caller's
//! own: the lenser a principal speaks for (a Service principal's acting
//! lenser), never anyone else's.

use std::sync::Arc;

use lf_core::{Clock, LenserId, LfResult, Principal, SystemClock};

use super::model::{Connection, SealBinding, Secret, SecretSealer, parse_provider, parse_settings};
use super::store::ConnectionStore;
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
}

fn parse_ref(s: &str) -> LfResult<ConnectionRef> {
    ConnectionRef::parse("ref", s)
}

impl ConnectionService {
    pub fn new(store: Arc<dyn ConnectionStore>, sealer: Arc<dyn SecretSealer>) -> Self {
        Self { store, sealer, clock: Arc::new(SystemClock) }
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
    pub async fn add(&self, p: &Principal, new: NewConnection) -> LfResult<Connection> {
        let owner = p.owner_for_create()?;
        let connection = Connection {
            owner,
            connection_ref: parse_ref(&new.connection_ref)?,
            provider: parse_provider(&new.provider)?,
            settings: parse_settings(new.settings)?,
            created_at: self.clock.now(),
        };
        let sealed = self
            .sealer
            .seal(&new.secret, SealBinding { owner, connection_ref: &connection.connection_ref })?;
        self.store.add_connection(&connection, &sealed).await?;
        Ok(connection)
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
