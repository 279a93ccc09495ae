//! Checks of client-supplied text shared by every domain crate,
//! [`text_newtype!`](crate::text_newtype), which declares a validated text
//! type with them, and the text types that lenses and workflows share
//! ([`Title`], [`Description`], [`Changelog`]).

use crate::error::{LfError, LfResult};

/// INVALID_ARGUMENT naming `field` when `s` contains NUL: PostgreSQL cannot
/// store it in text, and every store must accept the same values.
pub fn no_nul(field: &str, s: &str) -> LfResult<()> {
    if s.contains('\0') {
        return Err(LfError::invalid_argument(format!("{field} must not contain NUL (U+0000) characters"))
            .with_field(field));
    }
    Ok(())
}

/// INVALID_ARGUMENT naming `field` unless `s` has `min..=max` characters.
/// Counts at most `max + 1` characters, so a 10 MB string costs no more
/// than the limit.
pub fn check_length(field: &str, s: &str, min: usize, max: usize) -> LfResult<()> {
    let n = s.chars().take(max + 1).count();
    if n < min || n > max {
        let got = if n > max { format!("more than {max}") } else { n.to_string() };
        let hint = if n == 0 { " Give a non-empty value." } else { "" };
        return Err(LfError::invalid_argument(format!(
            "{field} must be {min} to {max} characters long, got {got}.{hint}"
        ))
        .with_field(field));
    }
    Ok(())
}

/// [`check_length`], then (when `min > 0`) not only whitespace, then no NUL.
pub fn check_text(field: &str, s: &str, min: usize, max: usize) -> LfResult<()> {
    check_length(field, s, min, max)?;
    if min > 0 && s.trim().is_empty() {
        return Err(LfError::invalid_argument(format!(
            "{field} must not be blank: give some text other than whitespace."
        ))
        .with_field(field));
    }
    no_nul(field, s)
}

/// Declares a validated text type: a `String` newtype whose `parse` trims
/// (when `trim = true`) and applies [`check_text`] with the argument name
/// `field` for errors. `Debug` shortens long text.
///
/// ```
/// lf_core::text_newtype!(
///     /// A name: 1 to 20 characters after trimming.
///     Name, "name", 1, 20, trim = true
/// );
/// assert_eq!(Name::parse("  Ada ").unwrap().as_str(), "Ada");
/// assert!(Name::parse("   ").is_err());
/// ```
#[macro_export]
macro_rules! text_newtype {
    ($(#[$doc:meta])* $name:ident, $field:literal, $min:expr, $max:expr, trim = $trim:expr) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash)]
        pub struct $name(String);

        impl $name {
            /// Fewest characters allowed.
            pub const MIN_CHARS: usize = $min;
            /// Most characters allowed.
            pub const MAX_CHARS: usize = $max;
            /// The argument name errors carry in `details.field`.
            pub const FIELD: &'static str = $field;

            /// Checks the length (after trimming, for trimmed kinds), that it
            /// is not only whitespace, and that it holds no NUL.
            pub fn parse(s: impl Into<String>) -> $crate::LfResult<Self> {
                let s: String = s.into();
                let s = if $trim { s.trim().to_owned() } else { s };
                $crate::check_text($field, &s, $min, $max)?;
                Ok(Self(s))
            }
            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
            /// The text, owned.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                let n = self.0.chars().count();
                if n > 80 {
                    write!(f, "{}({n} chars)", stringify!($name))
                } else {
                    ::core::fmt::Debug::fmt(&self.0, f)
                }
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

text_newtype!(
    /// A title (a lens's, a workflow's): 1 to 200 characters after
    /// trimming.
    Title, "title", 1, 200, trim = true
);
text_newtype!(
    /// A description (a lens's, a workflow's): up to 2,000 characters
    /// after trimming.
    Description, "description", 0, 2_000, trim = true
);
text_newtype!(
    /// What a version (a lens's, a workflow's) changed: 1 to 2,000
    /// characters after trimming.
    Changelog, "changelog", 1, 2_000, trim = true
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_blanks_and_nul() {
        assert!(check_text("t", "ok", 1, 5).is_ok());
        assert_eq!(
            check_text("t", "", 1, 5).unwrap_err().message(),
            "t must be 1 to 5 characters long, got 0. Give a non-empty value."
        );
        assert!(check_text("t", "toolong", 1, 5).unwrap_err().message().contains("more than 5"));
        assert!(check_text("t", "   ", 1, 5).unwrap_err().message().contains("blank"));
        assert!(check_text("t", "", 0, 5).is_ok());
        assert!(check_text("t", "a\0b", 1, 5).unwrap_err().message().contains("NUL"));
    }
}
