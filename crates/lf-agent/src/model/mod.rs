//! Agent types. Every value is parsed once at the edge and valid from then
//! on: the profile's checked fields and the agent record here, the policy
//! and the day's usage in `policy.rs`, tools, grants and the action log in
//! `tools.rs`, team runs and their events in `team.rs`.

use lf_core::{LenserId, LfError, LfResult, Timestamp, check_text};

mod policy;
mod team;
mod tools;

pub use policy::*;
pub use team::*;
pub use tools::*;

/// An agent's handle: 4 to 24 characters of `[a-z0-9_]`. Parsing lowercases
/// ASCII letters first, as a lenser's handle does, so `Ada_Bot` and
/// `ada_bot` are one handle. Handles are unique among all lensers and
/// agents, archived agents included: a retired agent's handle is never
/// somebody else's.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentHandle(String);

impl AgentHandle {
    /// Fewest characters of a handle.
    pub const MIN_LEN: usize = 4;
    /// Most characters of a handle.
    pub const MAX_LEN: usize = 24;

    /// Lowercases ASCII letters, then checks `[a-z0-9_]{4,24}`.
    /// INVALID_ARGUMENT (field `handle`) otherwise.
    pub fn parse(s: &str) -> LfResult<AgentHandle> {
        let lower = s.to_ascii_lowercase();
        let ok = (Self::MIN_LEN..=Self::MAX_LEN).contains(&lower.len())
            && lower.bytes().all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_'));
        if ok {
            Ok(AgentHandle(lower))
        } else {
            Err(LfError::invalid_argument(format!(
                "An agent's handle is 4 to 24 characters of lowercase letters, digits and _, got {}",
                LfError::excerpt(s)
            ))
            .with_field("handle"))
        }
    }

    /// The handle, lowercase, without `@`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for AgentHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "@{}", self.0)
    }
}

impl std::fmt::Display for AgentHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

lf_core::text_newtype!(
    /// The name shown for an agent: 1 to 60 characters after trimming.
    DisplayName, "display_name", 1, 60, trim = true
);
lf_core::text_newtype!(
    /// What the agent's profile says about it: up to 500 characters after trimming.
    Bio, "bio", 0, 500, trim = true
);
lf_core::text_newtype!(
    /// One line under the agent's name: up to 120 characters after trimming.
    Headline, "headline", 0, 120, trim = true
);
lf_core::text_newtype!(
    /// Who the agent is when it answers: the system prompt of its model
    /// calls, up to 4,000 characters, kept as written.
    Persona, "persona", 0, 4_000, trim = false
);
lf_core::text_newtype!(
    /// The model the agent asks for: 1 to 200 characters after trimming.
    /// Absent: the server's configured model.
    ModelName, "model", 1, 200, trim = true
);

/// A link on a profile: `http://` or `https://`, a host with a dot and a
/// top-level domain of two or more letters, at most 2,048 characters, no
/// whitespace (the original's rule, `^https?://[A-Za-z0-9.-]+\.[A-Za-z]{2,}.*$`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WebUrl(String);

impl WebUrl {
    /// Most characters of a link.
    pub const MAX_CHARS: usize = 2_048;

    /// Checks the link; INVALID_ARGUMENT naming `field` otherwise.
    pub fn parse(field: &str, s: &str) -> LfResult<WebUrl> {
        let s = s.trim();
        check_text(field, s, 1, Self::MAX_CHARS)?;
        let rest = s.strip_prefix("https://").or_else(|| s.strip_prefix("http://"));
        let host_ok = rest.is_some_and(|rest| {
            let host: &str = rest.split(['/', '?', '#', ':']).next().unwrap_or("");
            let tld = host.rsplit_once('.').map_or("", |(_, tld)| tld);
            host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
                && host.contains('.')
                && tld.len() >= 2
                && tld.bytes().all(|b| b.is_ascii_alphabetic())
        });
        if !host_ok || s.chars().any(char::is_whitespace) {
            return Err(LfError::invalid_argument(format!(
                "{field} must be an http:// or https:// link to a host name like example.com, got {}",
                LfError::excerpt(s)
            ))
            .with_field(field));
        }
        Ok(WebUrl(s.to_owned()))
    }

    /// The link.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

lf_core::word_enum!(
    /// Where the agent prefers its model calls to run.
    Runtime, "runtime_pref", [
        /// A hosted model (the default).
        Cloud = "cloud",
        /// A model on the owner's machine.
        Local = "local",
        /// Either, as available.
        Hybrid = "hybrid",
    ]
);

lf_core::word_enum!(
    /// Whether an agent acts.
    AgentStatus, "status", [
        /// It acts within its grants and policy.
        Active = "active",
        /// Retired: still readable by its owners, holding its handle, but it
        /// acts no more, takes no new grants and starts no team run.
        Archived = "archived",
    ]
);

lf_core::word_enum!(
    /// What a lenser is to an agent. See [`crate::roles`] for what each
    /// may do.
    Role, "role", [
        /// The person who created it and answers for it: exactly one.
        Owner = "owner",
        /// Manages it beside the owner.
        CoOwner = "co_owner",
        /// Runs it: acts through it and stops its team runs.
        Operator = "operator",
    ]
);

/// A lenser an owner added to an agent, as co-owner or operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Who.
    pub lenser: LenserId,
    /// `co_owner` or `operator`, never `owner` (the owner is
    /// [`Agent::owner`]).
    pub role: Role,
    /// Who added them.
    pub added_by: LenserId,
    /// When.
    pub added_at: Timestamp,
}

/// What an agent's profile shows: every field `update_ai_lenser` may patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The name shown.
    pub display_name: DisplayName,
    /// About the agent.
    pub bio: Option<Bio>,
    /// One line under its name.
    pub headline: Option<Headline>,
    /// Who it is when it answers (its system prompt).
    pub persona: Option<Persona>,
    /// The model it asks for; `None`: the server's.
    pub model: Option<ModelName>,
    /// Where its model calls prefer to run.
    pub runtime: Runtime,
    /// Its picture.
    pub avatar_url: Option<WebUrl>,
    /// Its page.
    pub website_url: Option<WebUrl>,
}

impl Profile {
    /// A profile with only a display name, every other field at its default.
    pub fn named(display_name: DisplayName) -> Self {
        Profile {
            display_name,
            bio: None,
            headline: None,
            persona: None,
            model: None,
            runtime: Runtime::Cloud,
            avatar_url: None,
            website_url: None,
        }
    }
}

/// An AI Lenser: a lenser of type agent, owned by a person. Its id is a
/// [`LenserId`], the one [`lf_core::Principal::Agent`] carries when it acts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    pub id: LenserId,
    /// Unique among lensers and agents; fixed at creation.
    pub handle: AgentHandle,
    /// The person it belongs to: fixed at creation, counted against their
    /// agent limit while the agent is active.
    pub owner: LenserId,
    pub profile: Profile,
    pub policy: Policy,
    pub status: AgentStatus,
    /// Co-owners and operators, oldest first.
    pub members: Vec<Member>,
    /// Counts the profile, policy and status writes: an update carries the
    /// revision it read, and a store refuses it when another came first.
    pub revision: u64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub archived_at: Option<Timestamp>,
}

impl Agent {
    /// What `lenser` is to this agent, if anything.
    pub fn role_of(&self, lenser: LenserId) -> Option<Role> {
        if lenser == self.owner {
            return Some(Role::Owner);
        }
        self.members.iter().find(|m| m.lenser == lenser).map(|m| m.role)
    }

    /// Whether it is active.
    pub fn is_active(&self) -> bool {
        self.status == AgentStatus::Active
    }
}

/// Which agents a listing shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentFilter {
    /// Agents this lenser is owner, co-owner or operator of (with `role`,
    /// only in that role). `None`: every agent in reach.
    pub lenser: Option<LenserId>,
    /// Only agents `lenser` holds in this role.
    pub role: Option<Role>,
    /// Archived agents too.
    pub include_archived: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles() {
        assert_eq!(AgentHandle::parse("Ada_Bot9").unwrap().as_str(), "ada_bot9");
        for ok in ["abcd", "a_b_", "1234", &"x".repeat(24)] {
            assert!(AgentHandle::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["abc", "", &"x".repeat(25), "ada-bot", "ada.bot", "ada bot", "adé_bot", "@ada", "ada\0"]
        {
            let e = AgentHandle::parse(bad).unwrap_err();
            assert_eq!(e.code(), lf_core::ErrorCode::InvalidArgument, "{bad}");
            assert_eq!(e.details()[0].0, "field");
        }
    }

    #[test]
    fn profile_lengths() {
        assert!(DisplayName::parse("x".repeat(60)).is_ok());
        assert!(DisplayName::parse("x".repeat(61)).is_err());
        assert!(DisplayName::parse("  ").is_err());
        assert!(Bio::parse("x".repeat(500)).is_ok());
        assert!(Bio::parse("x".repeat(501)).is_err());
        assert!(Headline::parse("x".repeat(120)).is_ok());
        assert!(Headline::parse("x".repeat(121)).is_err());
        assert!(Persona::parse("x".repeat(4_000)).is_ok());
        assert!(Persona::parse("x".repeat(4_001)).is_err());
        assert!(ModelName::parse(" ").is_err());
    }

    #[test]
    fn links() {
        for ok in ["https://example.com", "http://a.example.org/path?q=1#x", "https://x-y.io:8443/"] {
            assert_eq!(WebUrl::parse("website_url", ok).unwrap().as_str(), ok);
        }
        for bad in [
            "example.com",
            "ftp://example.com",
            "https://localhost",
            "https://example.c",
            "https://exa mple.com",
            "https://example.com/a b",
            "https://exa_mple.com",
            "https://example.123",
            "javascript:alert(1)",
        ] {
            let e = WebUrl::parse("website_url", bad).unwrap_err();
            assert_eq!(e.details()[0], ("field".into(), lf_core::Detail::Str("website_url".into())), "{bad}");
        }
    }
}
