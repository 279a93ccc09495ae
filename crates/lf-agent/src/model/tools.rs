//! Tools as an agent sees them: a catalog tool's identity (the catalog
//! supplies it; this crate does not know the catalog), the grants that let
//! an agent call one, and the log of what it did.

use std::borrow::Cow;
use std::sync::Arc;

use lf_core::{ErrorCode, LenserId, LfError, LfResult, Timestamp, clip};

lf_core::id_newtype!(
    /// A catalog tool's stable id: a UUID v5 of its name, made by the
    /// catalog. Grants are kept by it.
    ToolId
);
lf_core::id_newtype!(
    /// One entry of an agent's action log.
    ActionId
);

/// `field` as a word of `[a-z0-9_]`, 1 to `max` characters. Shared, not
/// copied, when cloned: a call's tool and action go from the check to its
/// pass and to its log entry.
fn word(field: &str, s: &str, max: usize, what: &str) -> LfResult<Arc<str>> {
    let ok = (1..=max).contains(&s.len()) && s.bytes().all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_'));
    if ok {
        Ok(Arc::from(s))
    } else {
        Err(LfError::invalid_argument(format!(
            "{field} must be {what}: 1 to {max} characters of lowercase letters, digits and _, got {}",
            LfError::excerpt(s)
        ))
        .with_field(field))
    }
}

macro_rules! word_newtype {
    ($(#[$doc:meta])* $name:ident, $max:expr, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(Arc<str>);

        impl $name {
            /// Checks the word; INVALID_ARGUMENT naming `field` otherwise.
            pub fn parse(field: &str, s: &str) -> LfResult<Self> {
                word(field, s, $max, $what).map(Self)
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

word_newtype!(
    /// A catalog tool's name, as `tools/list` shows it (`get_lens`).
    ToolName, 64, "a tool name"
);
word_newtype!(
    /// A catalog group's id (`lens`, `battle`, `workflow`, `agent`).
    ToolGroup, 32, "a tool group"
);
word_newtype!(
    /// What an action log entry says was asked: a tool's name or one of
    /// the action words a catalog tool declares (`join_battle`,
    /// `cast_vote`…).
    ActionName, 64, "a tool name or an action word"
);

impl From<&ToolName> for ActionName {
    /// A tool's name, as what a call of it asked for.
    fn from(name: &ToolName) -> Self {
        ActionName(name.0.clone())
    }
}

impl ToolGroup {
    /// The group whose tools manage agents; none of them may be granted.
    pub const AGENT: &'static str = "agent";

    /// Whether this is the Agent group.
    pub fn is_agent(&self) -> bool {
        *self.0 == *Self::AGENT
    }
}

lf_core::word_enum!(
    /// A tool's safety class, as the catalog declares it.
    Safety, "safety", [
        /// Changes nothing.
        Read = "read",
        /// Creates or changes state.
        Write = "write",
        /// Has side effects (runs or starts something).
        Execute = "execute",
        /// Removes or hides existing data: granting one needs `confirm: true`.
        Destructive = "destructive",
    ]
);

/// A catalog tool as the caller found it in the catalog (by id or name).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ToolRef {
    pub id: ToolId,
    pub name: ToolName,
    pub group: ToolGroup,
    pub safety: Safety,
}

/// How a call names a granted tool: by its id or by its name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ToolKey {
    Id(ToolId),
    Name(ToolName),
}

impl ToolKey {
    /// A UUID is an id, anything else a name (the spec's `tool_id` takes
    /// both). INVALID_ARGUMENT naming `field` when it is neither.
    pub fn parse(field: &str, s: &str) -> LfResult<ToolKey> {
        let s = s.trim();
        if s.len() == 36 && s.as_bytes()[8] == b'-' {
            return ToolId::parse(field, s).map(ToolKey::Id);
        }
        ToolName::parse(field, s).map(ToolKey::Name)
    }

    /// Whether `tool` is the tool this names.
    pub fn names(&self, tool: &ToolRef) -> bool {
        match self {
            ToolKey::Id(id) => tool.id == *id,
            ToolKey::Name(name) => tool.name == *name,
        }
    }
}

impl std::fmt::Display for ToolKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolKey::Id(id) => id.fmt(f),
            ToolKey::Name(n) => n.fmt(f),
        }
    }
}

impl From<&ToolRef> for ToolKey {
    fn from(t: &ToolRef) -> Self {
        ToolKey::Id(t.id)
    }
}

/// A tool an agent may call, granted by one of its owners.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub agent: LenserId,
    pub tool: ToolRef,
    pub granted_by: LenserId,
    pub granted_at: Timestamp,
}

/// What [`crate::AgentStore::put_grant`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredGrant {
    /// The grant as stored: on a repeated grant, the first one.
    pub grant: Grant,
    /// Whether it is new (false: the tool was already granted, nothing
    /// written).
    pub created: bool,
}

lf_core::word_enum!(
    /// What came of an action.
    ActionOutcome, "outcome", [
        /// The tool ran and answered.
        Succeeded = "succeeded",
        /// The tool ran and answered with an error.
        Failed = "failed",
        /// It never ran: not granted, against the policy, over a cap or
        /// the credit limit.
        Refused = "refused",
    ]
);

/// What an action was called with, in short: at most 500 characters, cut
/// with an ellipsis (the log is for people, not a copy of the arguments).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ArgsSummary(Arc<str>);

impl ArgsSummary {
    /// Most characters kept.
    pub const MAX_CHARS: usize = 500;

    /// `s`, cut to 500 characters, NUL characters dropped.
    pub fn new(s: &str) -> ArgsSummary {
        let kept = if s.contains('\0') { Cow::Owned(s.replace('\0', "")) } else { Cow::Borrowed(s) };
        ArgsSummary(Arc::from(clip(&kept, Self::MAX_CHARS).as_ref()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One thing an agent did, or was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionEntry {
    pub id: ActionId,
    pub agent: LenserId,
    /// What was asked: a tool name or an action word.
    pub action: ActionName,
    /// The tool it ran as, when there was one.
    pub tool: Option<ToolRef>,
    pub arguments: ArgsSummary,
    pub outcome: ActionOutcome,
    /// The error's code, for a failed or refused action.
    pub code: Option<ErrorCode>,
    /// The error's message, at most 500 characters.
    pub message: Option<String>,
    /// Who made the call: the agent itself, or the person or service
    /// acting through it (`None`: the service acting as nobody).
    pub actor: Option<LenserId>,
    pub at: Timestamp,
}

impl ActionEntry {
    /// Most characters of a message kept.
    pub const MAX_MESSAGE_CHARS: usize = 500;

    /// `message` as an entry keeps it.
    pub fn clip_message(message: &str) -> String {
        clip(&message.replace('\0', ""), Self::MAX_MESSAGE_CHARS).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_keys_are_ids_or_names() {
        let id = ToolId::new();
        assert_eq!(ToolKey::parse("tool_id", &id.to_string()).unwrap(), ToolKey::Id(id));
        assert_eq!(
            ToolKey::parse("tool_id", &id.to_string().to_uppercase()).unwrap(),
            ToolKey::Id(id),
            "any case"
        );
        assert_eq!(
            ToolKey::parse("tool_id", " get_lens ").unwrap(),
            ToolKey::Name(ToolName::parse("t", "get_lens").unwrap())
        );
        for bad in ["", "Get-Lens", "00000000-0000-0000-0000-00000000000g", &"x".repeat(65)] {
            let e = ToolKey::parse("tool_id", bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
    }

    #[test]
    fn summaries_are_bounded() {
        let s = ArgsSummary::new(&"é".repeat(10_000));
        assert_eq!(s.as_str().chars().count(), ArgsSummary::MAX_CHARS + 1);
        assert_eq!(ArgsSummary::new("a\0b").as_str(), "ab");
    }
}
