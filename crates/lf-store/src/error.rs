//! The one place sqlx errors become [`LfError`]s.

use lf_core::{ErrorCode, LfError};

/// Maps a database error to the domain's error: a unique violation is
/// CONFLICT, a missing row NOT_FOUND, anything else INTERNAL. The sqlx error is
/// kept as the cause (for logs) and never appears in the message, which may
/// reach a client.
///
/// Store methods refine the message where they know what clashed (see
/// [`conflict_or`]); a foreign-key or check violation means the store was
/// handed rows that break its contract, which is a bug, hence INTERNAL.
pub fn map_db_err(e: sqlx::Error) -> LfError {
    match &e {
        sqlx::Error::RowNotFound => LfError::new(
            ErrorCode::NotFound,
            "What you asked for was not found, or you cannot see it. Check the id, or list what you can see first.",
        )
        .with_source(e),
        sqlx::Error::Database(db) if db.is_unique_violation() => {
            LfError::conflict("That already exists: an id or version number is taken. Read it again and retry.")
                .with_source(e)
        }
        _ => LfError::internal(e),
    }
}

/// Like [`map_db_err`], but a unique violation becomes `conflict()`, which
/// says what clashed.
pub(crate) fn conflict_or(conflict: impl FnOnce() -> LfError) -> impl FnOnce(sqlx::Error) -> LfError {
    move |e| match &e {
        sqlx::Error::Database(db) if db.is_unique_violation() => conflict().with_source(e),
        _ => map_db_err(e),
    }
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
