//! Why a request was not answered: one error type with a stable kind, and
//! messages that say what a person can do about it.

use std::error::Error as StdError;
use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

use crate::allow::ALLOW_KEY;
use crate::policy::METADATA_REASON;

/// The kind of an [`EgressError`], as a stable word for logs and node
/// results ([`EgressErrorKind::as_str`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EgressErrorKind {
    /// A refused address: nothing was sent to it.
    Blocked,
    /// A URL or request that is never sent (scheme, credentials, headers).
    Invalid,
    /// The host name did not resolve.
    Dns,
    /// More redirects than the limit.
    Redirects,
    /// An answer body over the limit.
    TooLarge,
    /// No complete answer in time.
    Timeout,
    /// The exchange itself failed: connection, TLS, protocol.
    Http,
}

impl EgressErrorKind {
    /// The kind as a word that never changes once released.
    pub fn as_str(self) -> &'static str {
        match self {
            EgressErrorKind::Blocked => "blocked",
            EgressErrorKind::Invalid => "invalid_request",
            EgressErrorKind::Dns => "dns",
            EgressErrorKind::Redirects => "too_many_redirects",
            EgressErrorKind::TooLarge => "too_large",
            EgressErrorKind::Timeout => "timeout",
            EgressErrorKind::Http => "http",
        }
    }
}

impl fmt::Display for EgressErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why [`crate::Egress::send`] gave no answer.
#[derive(Debug)]
#[non_exhaustive]
pub enum EgressError {
    /// `addr` (which `host` resolved to, or the URL's own address, then
    /// `host` is its text) is refused; `reason` is [`crate::blocked`]'s word.
    Blocked { host: String, addr: IpAddr, reason: &'static str },
    /// The request is never sent as it stands.
    Invalid { reason: String },
    /// `host` did not resolve, or resolved to nothing.
    Dns { host: String, reason: String },
    /// The answer after `limit` redirects was one more redirect, to `location`.
    Redirects { limit: usize, location: String },
    /// The answer body was longer than `limit` bytes.
    TooLarge { limit: usize },
    /// The whole exchange (or one connection) took longer than `after`.
    Timeout { after: Duration },
    /// The exchange failed; `source` is the HTTP client's error.
    Http { message: String, source: Option<Box<dyn StdError + Send + Sync>> },
}

impl EgressError {
    pub(crate) fn blocked(host: String, addr: IpAddr, reason: &'static str) -> Self {
        EgressError::Blocked { host, addr, reason }
    }

    pub(crate) fn invalid(reason: impl Into<String>) -> Self {
        EgressError::Invalid { reason: reason.into() }
    }

    pub(crate) fn http(message: impl Into<String>) -> Self {
        EgressError::Http { message: message.into(), source: None }
    }

    /// The stable kind.
    pub fn kind(&self) -> EgressErrorKind {
        match self {
            EgressError::Blocked { .. } => EgressErrorKind::Blocked,
            EgressError::Invalid { .. } => EgressErrorKind::Invalid,
            EgressError::Dns { .. } => EgressErrorKind::Dns,
            EgressError::Redirects { .. } => EgressErrorKind::Redirects,
            EgressError::TooLarge { .. } => EgressErrorKind::TooLarge,
            EgressError::Timeout { .. } => EgressErrorKind::Timeout,
            EgressError::Http { .. } => EgressErrorKind::Http,
        }
    }
}

impl fmt::Display for EgressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EgressError::Blocked { host, addr, reason } => {
                let what = if *host == addr.to_string() {
                    "the address".to_owned()
                } else {
                    format!("its address {addr}")
                };
                if *reason == METADATA_REASON {
                    write!(
                        f,
                        "Refused to reach {host}: {what} is a cloud metadata address, which no workflow node may reach, whatever {ALLOW_KEY} says."
                    )
                } else {
                    write!(
                        f,
                        "Refused to reach {host}: {what} is in a blocked range: {reason}. An operator can open named hosts and ranges with {ALLOW_KEY}."
                    )
                }
            }
            EgressError::Invalid { reason } => write!(f, "The request was not sent: {reason}."),
            EgressError::Dns { host, reason } => {
                write!(
                    f,
                    "Could not resolve {host} ({reason}); nothing was sent. Check the host name in the URL."
                )
            }
            EgressError::Redirects { limit, location } => write!(
                f,
                "Stopped after {limit} redirects: the next one pointed to {location}. Use the final URL directly."
            ),
            EgressError::TooLarge { limit } => {
                write!(f, "The answer was larger than the {limit}-byte limit and was refused.")
            }
            EgressError::Timeout { after } => write!(
                f,
                "No complete answer within {} s; the request was abandoned. Try again later or ask the server for less.",
                after.as_secs_f64()
            ),
            EgressError::Http { message, .. } => write!(f, "The HTTP request failed: {message}."),
        }
    }
}

impl StdError for EgressError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            EgressError::Http { source: Some(e), .. } => Some(e.as_ref()),
            _ => None,
        }
    }
}
