use uuid::Uuid;

use crate::error::LfError;

/// Parses the canonical hyphenated form `8-4-4-4-12` (any case). The version
/// and variant bits are not checked: seeded and imported ids are often not v4.
pub fn parse_uuid(field: &str, s: &str) -> Result<Uuid, LfError> {
    let bytes = s.as_bytes();
    let shape_ok = bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    if !shape_ok {
        return Err(LfError::invalid_argument(format!(
            "{field} must be a UUID like 0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d, got {}",
            crate::error::quote_excerpt(s)
        ))
        .with_field(field));
    }
    Uuid::parse_str(s)
        .map_err(|_| LfError::invalid_argument(format!("{field} is not a valid UUID")).with_field(field))
}

/// Declares a UUID id newtype: `new()` (UUIDv7), `from_uuid`, `as_uuid`,
/// `parse(field, s)` (INVALID_ARGUMENT naming `field`), `Display` as the
/// hyphenated UUID, `FromStr`. Other crates declare their own ids with it.
#[macro_export]
macro_rules! id_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name($crate::__private::Uuid);

        impl $name {
            /// A new time-ordered (UUIDv7) id: keeps b-tree inserts local.
            pub fn new() -> Self {
                Self($crate::__private::Uuid::now_v7())
            }
            /// The id with this UUID (as read back from storage).
            pub const fn from_uuid(u: $crate::__private::Uuid) -> Self {
                Self(u)
            }
            /// The UUID, for storage.
            pub const fn as_uuid(&self) -> $crate::__private::Uuid {
                self.0
            }
            /// Parses a client-supplied id; `field` names the argument in the error.
            pub fn parse(field: &str, s: &str) -> ::core::result::Result<Self, $crate::LfError> {
                $crate::parse_uuid(field, s).map(Self)
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::Display::fmt(&self.0.hyphenated(), f)
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.0)
            }
        }

        impl ::core::str::FromStr for $name {
            type Err = $crate::LfError;
            fn from_str(s: &str) -> ::core::result::Result<Self, $crate::LfError> {
                Self::parse(stringify!($name), s)
            }
        }

        impl From<$name> for $crate::__private::Uuid {
            fn from(id: $name) -> $crate::__private::Uuid {
                id.0
            }
        }
    };
}

id_newtype!(
    /// A lens (a reusable prompt template and its version history).
    LensId
);
id_newtype!(
    /// One immutable version of a lens.
    VersionId
);
id_newtype!(
    /// One parameter of one lens version.
    ParamId
);
id_newtype!(
    /// A person (or, later, an AI Lenser) who owns rows.
    LenserId
);
id_newtype!(
    /// A workflow.
    WorkflowId
);
id_newtype!(
    /// A recorded run (a lens run tracked against a workflow, a workflow run).
    RunId
);
id_newtype!(
    /// A battle: one task prompt answered by 2 to 26 contenders.
    BattleId
);
id_newtype!(
    /// One contender (a slot A to Z) of one battle.
    ContenderId
);
id_newtype!(
    /// What a contender stands for across battles: a lenser, an AI Lenser,
    /// a model profile or a workflow. Ratings are kept per reference.
    ContenderRefId
);
id_newtype!(
    /// A model profile: what to ask and where (an endpoint, a model, its
    /// parameters and prices).
    ModelProfileId
);
id_newtype!(
    /// A contender's submission to a battle.
    SubmissionId
);
id_newtype!(
    /// One voter's vote in one battle.
    VoteId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_any_version_bits_and_case() {
        let id = LensId::parse("lens_id", "45000000-0001-0004-0001-00000000000A").unwrap();
        assert_eq!(id.to_string(), "45000000-0001-0004-0001-00000000000a");
    }

    #[test]
    fn refuses_other_shapes_with_the_field_named() {
        for bad in [
            "",
            "not-a-uuid",
            "45000000000100040001000000000001",
            "{45000000-0001-0004-0001-000000000001}",
            "urn:uuid:45000000-0001-0004-0001-000000000001",
            "45000000-0001-0004-0001-00000000000g",
            "45000000-0001-0004-0001-0000000000011",
        ] {
            let err = LensId::parse("lens_id", bad).unwrap_err();
            assert_eq!(err.code(), crate::ErrorCode::InvalidArgument, "{bad}");
            assert!(err.message().starts_with("lens_id must be a UUID"), "{bad}");
        }
    }

    #[test]
    fn new_ids_are_time_ordered() {
        let a = VersionId::new();
        let b = VersionId::new();
        assert!(a < b);
    }
}
