//! Who a stdio server acts as when `LENSERFIGHT_LENSER_ID` is unset: the
//! database's local lenser, created on first start from the login name and
//! kept, so the server works with no configuration at all.

use std::sync::Arc;

use lf_auth::{AuthConfig, AuthService};
use lf_core::SystemClock;
use lf_store::Database;

use crate::settings::{ConfigError, Setting};

pub use lf_auth::LocalLenser;

/// The login name of the user running the server: `$USER`, else
/// `$LOGNAME`, else `$USERNAME`; empty when none is set.
fn login_name() -> String {
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()))
        .unwrap_or_default()
}

/// The database's local lenser: the one recorded on an earlier start, or a
/// new account (no password: it cannot sign in over HTTP) whose handle comes
/// from the login name (see [`lf_auth::Handle::from_login`]), recorded as the local lenser from now on. An error
/// names `LENSERFIGHT_LENSER_ID`, which avoids the need.
pub async fn local_lenser(db: &Database) -> Result<LocalLenser, ConfigError> {
    let auth = AuthService::new(db.auth_store(), Arc::new(SystemClock), AuthConfig::default());
    auth.local_lenser(&login_name()).await.map_err(|e| {
        ConfigError::value(
            Setting::LenserId,
            format!("unset, and the database's local lenser could not be kept: {}", e.message()),
        )
    })
}
