//! Label names: the names a lens gives its versions (`production`,
//! `staging`), which workflows and battles name too.

use std::fmt;

use crate::error::{LfError, LfResult};

/// A label's name: `[a-z0-9_-]{1,32}`. Kept inline, so a
/// [`crate::VersionSelector`] naming one stays `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LabelName {
    len: u8,
    bytes: [u8; LabelName::MAX_CHARS],
}

impl LabelName {
    pub const MAX_CHARS: usize = 32;
    /// Reserved: always the head.
    pub const LATEST: &'static str = "latest";
    /// Protected on every lens.
    pub const PRODUCTION: &'static str = "production";

    /// A label name as a caller gives it in `field`; `latest` included (it
    /// reads the head; [`LabelName::settable`] refuses it).
    pub fn parse(field: &str, s: &str) -> LfResult<Self> {
        let ok = !s.is_empty()
            && s.len() <= Self::MAX_CHARS
            && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if !ok {
            return Err(LfError::invalid_argument(format!(
                "{field} must be a lens label: 1 to {} characters of a-z, 0-9, _ and -; got {}",
                Self::MAX_CHARS,
                LfError::excerpt(s)
            ))
            .with_field(field));
        }
        let mut bytes = [0; Self::MAX_CHARS];
        bytes[..s.len()].copy_from_slice(s.as_bytes());
        Ok(Self { len: s.len() as u8, bytes })
    }

    /// A name a label can be set under: any but `latest`.
    pub fn settable(field: &str, s: &str) -> LfResult<Self> {
        let name = Self::parse(field, s)?;
        if name.is_latest() {
            return Err(LfError::invalid_argument(
                "latest is reserved: it always means the head version, so it cannot be set or removed. Choose another label name.",
            )
            .with_field(field));
        }
        Ok(name)
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored.
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or_default()
    }

    pub fn is_latest(&self) -> bool {
        self.as_str() == Self::LATEST
    }

    /// Protected whatever the owner says: `production`.
    pub fn always_protected(&self) -> bool {
        self.as_str() == Self::PRODUCTION
    }
}

/// By name, as a listing shows them.
impl Ord for LabelName {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for LabelName {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for LabelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for LabelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["production", "a", "staging-2", "x_y", &"z".repeat(32), "latest"] {
            assert_eq!(LabelName::parse("label", ok).unwrap().as_str(), ok);
        }
        for bad in ["", "Prod", "prod uction", "é", &"z".repeat(33), "a.b", "a/b"] {
            let e = LabelName::parse("label", bad).unwrap_err();
            assert_eq!(e.code(), crate::ErrorCode::InvalidArgument, "{bad}");
        }
        assert!(LabelName::settable("label", "latest").is_err());
        assert!(LabelName::settable("label", "staging").is_ok());
        assert!(LabelName::parse("l", "production").unwrap().always_protected());
        assert!(!LabelName::parse("l", "staging").unwrap().always_protected());
        assert!(LabelName::parse("l", "latest").unwrap().is_latest());
        assert_eq!(format!("{:?}", LabelName::parse("l", "beta").unwrap()), "\"beta\"");
    }
}
