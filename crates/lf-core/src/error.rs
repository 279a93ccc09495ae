use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;

/// The stable error codes. Their string forms are part of the public contract:
/// clients match on them, so they never change once released.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    NotFound,
    Forbidden,
    MissingParams,
    MissingLenser,
    SlotsFull,
    ConfirmationRequired,
    InvalidTransition,
    BadInput,
    InvalidArgument,
    Conflict,
    Throttled,
    PermissionDenied,
    BudgetExceeded,
    /// The person, asked by the client (MCP elicitation), said no.
    Declined,
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 15] = [
        ErrorCode::NotFound,
        ErrorCode::Forbidden,
        ErrorCode::MissingParams,
        ErrorCode::MissingLenser,
        ErrorCode::SlotsFull,
        ErrorCode::ConfirmationRequired,
        ErrorCode::InvalidTransition,
        ErrorCode::BadInput,
        ErrorCode::InvalidArgument,
        ErrorCode::Conflict,
        ErrorCode::Throttled,
        ErrorCode::PermissionDenied,
        ErrorCode::BudgetExceeded,
        ErrorCode::Declined,
        ErrorCode::Internal,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Forbidden => "FORBIDDEN",
            ErrorCode::MissingParams => "MISSING_PARAMS",
            ErrorCode::MissingLenser => "MISSING_LENSER",
            ErrorCode::SlotsFull => "SLOTS_FULL",
            ErrorCode::ConfirmationRequired => "CONFIRMATION_REQUIRED",
            ErrorCode::InvalidTransition => "INVALID_TRANSITION",
            ErrorCode::BadInput => "BAD_INPUT",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::Throttled => "THROTTLED",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::BudgetExceeded => "BUDGET_EXCEEDED",
            ErrorCode::Declined => "DECLINED",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Structured details of an error, for a client to act on without parsing the
/// message. Plain data: the catalog turns it into JSON.
#[derive(Clone, Debug, PartialEq)]
pub enum DetailValue {
    Str(String),
    Strs(Vec<String>),
    Int(i64),
    Bool(bool),
    Map(ErrorDetails),
    List(Vec<DetailValue>),
}

/// Ordered `(key, value)` pairs.
pub type ErrorDetails = Vec<(String, DetailValue)>;

pub use DetailValue as Detail;

/// The one error type of the domain. A message says what to do next; the
/// `source`, when any, is for logs only and never reaches a client.
pub struct LfError {
    code: ErrorCode,
    message: String,
    details: ErrorDetails,
    source: Option<Box<dyn StdError + Send + Sync>>,
}

pub type LfResult<T> = Result<T, LfError>;

/// At most `max` characters of `s`, with an ellipsis when cut: a message
/// built from client input never echoes a 10 MB argument.
pub fn clip(s: &str, max: usize) -> Cow<'_, str> {
    // No more bytes than `max` is no more characters either.
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    match s.char_indices().nth(max) {
        Some((at, _)) => Cow::Owned(format!("{}…", &s[..at])),
        None => Cow::Borrowed(s),
    }
}

/// At most 60 characters of client input, quoted, for error messages: enough to
/// recognise the value.
pub(crate) fn quote_excerpt(s: &str) -> String {
    let mut out = String::from("\"");
    out.extend(clip(s, 60).chars().flat_map(char::escape_debug));
    out.push('"');
    out
}

impl LfError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), details: Vec::new(), source: None }
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    pub fn details(&self) -> &ErrorDetails {
        &self.details
    }
    pub fn cause(&self) -> Option<&(dyn StdError + Send + Sync + 'static)> {
        self.source.as_deref()
    }

    pub fn with_detail(mut self, key: impl Into<String>, value: DetailValue) -> Self {
        self.details.push((key.into(), value));
        self
    }

    /// Names the offending argument in `details.field`.
    pub fn with_field(self, field: &str) -> Self {
        self.with_detail("field", DetailValue::Str(field.to_owned()))
    }

    /// The same error of an argument nested in `parent`: its
    /// `details.field` becomes `parent.field` (`parent` when it named none).
    pub fn within_field(mut self, parent: &str) -> Self {
        match self.details.iter_mut().find(|(k, _)| k == "field") {
            Some((_, DetailValue::Str(f))) => *f = format!("{parent}.{f}"),
            _ => return self.with_field(parent),
        }
        self
    }

    pub fn with_source(mut self, source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// A quoted excerpt of client input for messages.
    pub fn excerpt(s: &str) -> String {
        quote_excerpt(s)
    }

    pub fn not_found(what: &str, id: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::NotFound,
            format!(
                "{what} {id} was not found, or you cannot see it. Check the id, or list what you can see first."
            ),
        )
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Forbidden, message)
    }
    pub fn missing_lenser() -> Self {
        Self::new(
            ErrorCode::MissingLenser,
            "No lenser is set to own this. Set LENSERFIGHT_LENSER_ID to your lenser id (a UUID) in the server's environment and restart it.",
        )
    }
    pub fn confirmation_required(action: &str) -> Self {
        Self::new(
            ErrorCode::ConfirmationRequired,
            format!(
                "{action} needs explicit confirmation: call it again with confirm: true once the user has agreed."
            ),
        )
    }
    pub fn bad_input(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadInput, message)
    }
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Conflict, message)
    }
    pub fn permission_denied(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::PermissionDenied, message)
    }
    /// An unexpected failure. The client sees a generic message; `cause` is logged.
    pub fn internal(cause: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self::new(
            ErrorCode::Internal,
            "Something went wrong on the server. It has been logged; try again later.",
        )
        .with_source(cause)
    }
}

impl fmt::Debug for LfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("LfError");
        d.field("code", &self.code).field("message", &self.message);
        if !self.details.is_empty() {
            d.field("details", &self.details);
        }
        if let Some(s) = &self.source {
            d.field("source", s);
        }
        d.finish()
    }
}

impl fmt::Display for LfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl StdError for LfError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn StdError + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_counts_characters_not_bytes() {
        assert!(matches!(clip("abc", 3), Cow::Borrowed("abc")));
        assert_eq!(clip("abcd", 3), "abc…");
        // Three characters of six bytes: kept whole.
        assert!(matches!(clip("ééé", 3), Cow::Borrowed("ééé")));
        assert_eq!(clip("éééé", 3), "ééé…");
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("a", 0), "…");
    }

    #[test]
    fn codes_are_unique_screaming_snake() {
        let mut seen = std::collections::HashSet::new();
        for c in ErrorCode::ALL {
            assert!(seen.insert(c.as_str()));
            assert!(c.as_str().chars().all(|ch| ch.is_ascii_uppercase() || ch == '_'));
        }
    }

    #[test]
    fn internal_hides_its_cause_from_the_message() {
        let e = LfError::internal("near \"SELEC\": syntax error");
        assert!(!e.message().contains("SELEC"));
        assert!(e.cause().unwrap().to_string().contains("SELEC"));
    }

    #[test]
    fn excerpts_are_bounded() {
        let long = "x".repeat(10_000_000);
        assert!(LfError::excerpt(&long).len() < 80);
        assert_eq!(LfError::excerpt("a\"b"), "\"a\\\"b\"");
    }
}
