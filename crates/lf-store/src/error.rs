//! The one place database errors become [`LfError`]s, whichever driver
//! reported them: sqlx on either backend, or rusqlite on SQLite's direct
//! path (`sqlite/`), which tells its errors in sqlx's words ([`DbError`]).

use lf_core::{ErrorCode, LfError};
use sqlx::error::ErrorKind;

use crate::backend::Backend;

/// What a driver's error means to a store, in sqlx's words.
pub(crate) enum Failure {
    /// A statement that had to answer a row answered none.
    NoRow,
    /// The database refused the statement: a constraint of this kind, or
    /// [`ErrorKind::Other`] for any other refusal.
    Refused(ErrorKind),
    /// Anything else: the connection, the protocol, a value that does not
    /// decode.
    Other,
}

/// A driver's error, told as a [`Failure`] so that [`map_db`] maps every
/// driver's alike.
pub(crate) trait DbError: std::error::Error + Send + Sync + 'static {
    fn failure(&self) -> Failure;
}

impl DbError for sqlx::Error {
    fn failure(&self) -> Failure {
        match self {
            sqlx::Error::RowNotFound => Failure::NoRow,
            sqlx::Error::Database(db) => Failure::Refused(db.kind()),
            _ => Failure::Other,
        }
    }
}

/// Maps an sqlx error to the domain's error: a unique violation is
/// CONFLICT, a missing row NOT_FOUND, anything else INTERNAL, the sqlx
/// error kept as the cause (the crate's one mapping, which SQLite's direct
/// path shares).
pub fn map_db_err(e: sqlx::Error) -> LfError {
    map_db(e)
}

/// Maps a database error to the domain's error: a unique violation is
/// CONFLICT, a missing row NOT_FOUND, anything else INTERNAL. The driver's
/// error is kept as the cause (for logs) and never appears in the message,
/// which may reach a client.
///
/// Store methods refine the message where they know what clashed (see
/// [`conflict_or`]); a foreign-key or check violation means the store was
/// handed rows that break its contract, which is a bug, hence INTERNAL.
pub(crate) fn map_db<E: DbError>(e: E) -> LfError {
    match e.failure() {
        Failure::NoRow => LfError::new(
            ErrorCode::NotFound,
            "What you asked for was not found, or you cannot see it. Check the id, or list what you can see first.",
        )
        .with_source(e),
        Failure::Refused(ErrorKind::UniqueViolation) => {
            LfError::conflict("That already exists: an id or version number is taken. Read it again and retry.")
                .with_source(e)
        }
        Failure::Refused(_) | Failure::Other => LfError::internal(e),
    }
}

/// Like [`map_db`], but a unique violation becomes `conflict()`, which
/// says what clashed.
pub(crate) fn conflict_or<E: DbError>(conflict: impl FnOnce() -> LfError) -> impl FnOnce(E) -> LfError {
    move |e| match e.failure() {
        Failure::Refused(ErrorKind::UniqueViolation) => conflict().with_source(e),
        _ => map_db(e),
    }
}

/// The INTERNAL error of a database that cannot be opened or migrated: the
/// message names the setting and the cause, for the operator at start-up.
pub(crate) fn open_failed(
    backend: Backend,
    what: &str,
    cause: impl std::error::Error + Send + Sync + 'static,
) -> LfError {
    LfError::new(
        ErrorCode::Internal,
        format!("could not {what} the {backend} database named by LENSERFIGHT_DATABASE_URL: {cause}"),
    )
    .with_source(cause)
}

/// A stored value that the domain refuses: the database holds something no
/// store wrote. INTERNAL, with what was wrong kept for the logs.
pub(crate) fn corrupt(what: impl Into<String>) -> LfError {
    LfError::internal(CorruptRow(what.into()))
}

#[derive(Debug)]
struct CorruptRow(String);

impl std::fmt::Display for CorruptRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a stored row is not valid: {}", self.0)
    }
}

impl std::error::Error for CorruptRow {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unexpected_errors_are_internal_and_keep_their_cause_out_of_the_message() {
        let err = map_db_err(sqlx::Error::Protocol("near \"SELEC\": syntax error".into()));
        assert_eq!(err.code(), ErrorCode::Internal);
        assert!(!err.message().contains("SELEC"));
        assert!(err.cause().unwrap().to_string().contains("SELEC"));
        assert_eq!(map_db_err(sqlx::Error::RowNotFound).code(), ErrorCode::NotFound);
        assert_eq!(corrupt("visibility \"x\"").code(), ErrorCode::Internal);
    }
}
