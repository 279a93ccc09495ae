//! Whether the database serves: it answers a fresh connection, and every
//! migration this build knows is applied, as this build wrote it.

use std::time::Duration;

use sqlx::migrate::{MigrationType, Migrator};

/// How long the check waits for the database.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// The applied migrations' rows: `(version, checksum, success)`.
pub(crate) const APPLIED: &str = "SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version";

/// Whether `applied` (the rows of [`APPLIED`]) is exactly what `migrator`
/// applies: else why not, in a few words.
pub(crate) fn current(migrator: &Migrator, applied: &[(i64, Vec<u8>, bool)]) -> Result<(), String> {
    let known: Vec<_> =
        migrator.iter().filter(|m| !matches!(m.migration_type, MigrationType::ReversibleDown)).collect();
    for m in &known {
        match applied.iter().find(|(v, ..)| *v == m.version) {
            None => return Err(format!("migration {} is not applied", m.version)),
            Some((_, _, false)) => return Err(format!("migration {} failed", m.version)),
            Some((_, sum, true)) if **sum != *m.checksum => {
                return Err(format!("migration {} was applied from another text", m.version));
            }
            Some(_) => {}
        }
    }
    match applied.iter().find(|(v, ..)| !known.iter().any(|m| m.version == *v)) {
        Some((v, ..)) => Err(format!("migration {v} is unknown to this server")),
        None => Ok(()),
    }
}

/// What kind of failure `e` is, without its text (which may name the
/// file, or quote a URL).
pub(crate) fn kind(e: &sqlx::Error) -> &'static str {
    match e {
        sqlx::Error::Database(_) => "a database error",
        sqlx::Error::Io(_) => "an I/O error",
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => "no connection",
        _ => "an error",
    }
}
