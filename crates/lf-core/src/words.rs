//! Closed sets of wire words: the enums every domain parses from a string
//! argument (a status, a visibility, a kind) and writes back unchanged.

use crate::LfError;

/// Declares a closed set of wire words: an enum with `ALL` (declaration
/// order), `as_str` (the wire form, stable once released), `from_word`,
/// `parse` (INVALID_ARGUMENT naming `field` and listing the words) and
/// `Display`.
///
/// ```
/// lf_core::word_enum!(
///     /// A colour.
///     Colour, "colour", [
///         /// Red.
///         Red = "red",
///         Green = "green",
///     ]
/// );
/// assert_eq!(Colour::parse("green").unwrap(), Colour::Green);
/// assert_eq!(Colour::parse("blue").unwrap_err().message(), "colour must be one of red, green; got \"blue\"");
/// ```
#[macro_export]
macro_rules! word_enum {
    ($(#[$doc:meta])* $name:ident, $field:literal, [$($(#[$vdoc:meta])* $variant:ident = $s:literal),+ $(,)?]) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every word, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire form, stable once released.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $s),+
                }
            }

            /// The value with this wire form; INVALID_ARGUMENT naming the
            /// field and listing the words otherwise.
            pub fn parse(s: &str) -> $crate::LfResult<Self> {
                Self::from_word(s)
                    .ok_or_else(|| $crate::not_one_of($field, s, Self::ALL.iter().map(|v| v.as_str())))
            }

            /// The value with this wire form, if any.
            pub fn from_word(s: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// INVALID_ARGUMENT for `got`, which is none of the words `all` that the
/// argument `field` takes.
pub fn not_one_of<'a>(field: &str, got: &str, all: impl Iterator<Item = &'a str>) -> LfError {
    LfError::invalid_argument(format!(
        "{field} must be one of {}; got {}",
        all.collect::<Vec<_>>().join(", "),
        LfError::excerpt(got)
    ))
    .with_field(field)
}
