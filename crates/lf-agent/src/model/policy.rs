//! What an agent may do and how much of it a day: the policy's flags, caps
//! and credit limit, the UTC day that usage is counted in, and the day's
//! usage as a store counts it.

use lf_core::{LfError, LfResult, Timestamp};

/// How many times a day an agent may do one kind of thing: 0 to 10,000.
/// The call that would make the count exceed the cap is refused, so with a
/// cap of 3 the third call of the day passes and the fourth does not; 0
/// allows none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cap(u32);

impl Cap {
    /// The highest cap.
    pub const MAX: u32 = 10_000;

    /// The cap `n`; INVALID_ARGUMENT naming `field` outside 0 to 10,000.
    pub fn parse(field: &str, n: i64) -> LfResult<Cap> {
        if (0..=Self::MAX as i64).contains(&n) {
            Ok(Cap(n as u32))
        } else {
            Err(LfError::invalid_argument(format!("{field} must be 0 to {}, got {n}", Self::MAX))
                .with_field(field))
        }
    }

    /// A cap known to be in range (defaults, tests).
    pub const fn of(n: u32) -> Cap {
        Cap(if n > Self::MAX { Self::MAX } else { n })
    }

    pub const fn get(self) -> u32 {
        self.0
    }
}

/// How many credits an agent may spend in a UTC day: 0 to 1,000,000,000.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CreditLimit(u64);

impl CreditLimit {
    /// The highest limit.
    pub const MAX: u64 = 1_000_000_000;

    /// The limit `n`; INVALID_ARGUMENT (field `spending_limit_credits`)
    /// outside 0 to 1,000,000,000.
    pub fn parse(n: i64) -> LfResult<CreditLimit> {
        if (0..=Self::MAX as i64).contains(&n) {
            Ok(CreditLimit(n as u64))
        } else {
            Err(LfError::invalid_argument(format!(
                "spending_limit_credits must be 0 to {}, got {n}",
                Self::MAX
            ))
            .with_field("spending_limit_credits"))
        }
    }

    /// A limit known to be in range (defaults, tests).
    pub const fn of(n: u64) -> CreditLimit {
        CreditLimit(if n > Self::MAX { Self::MAX } else { n })
    }

    pub const fn get(self) -> u64 {
        self.0
    }
}

/// What an agent may do. A new agent may do none of the gated things
/// (battles, votes) until an owner turns them on, and its caps are finite:
/// unlike the original, no cap means "unlimited".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// May join battles and submit to them (`add_battle_contender`,
    /// `submit_battle_run`).
    pub can_join_battles: bool,
    /// May vote in battles (`cast_battle_vote`).
    pub can_vote: bool,
    /// May create battles (`create_battle`).
    pub can_create_battles: bool,
    /// May move and remove its owner's protected lens labels
    /// (`production`, and those the owner protects).
    pub can_move_protected_labels: bool,
    /// Battles joined or created per day.
    pub max_daily_battles: Cap,
    /// Votes cast per day.
    pub max_daily_votes: Cap,
    /// Team runs started per day.
    pub max_daily_team_runs: Cap,
    /// Tool calls per day, every granted tool counted.
    pub max_daily_tool_calls: Cap,
    /// Credits spent per day.
    pub spending_limit_credits: CreditLimit,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            can_join_battles: false,
            can_vote: false,
            can_create_battles: false,
            can_move_protected_labels: false,
            max_daily_battles: Cap::of(10),
            max_daily_votes: Cap::of(50),
            max_daily_team_runs: Cap::of(10),
            max_daily_tool_calls: Cap::of(200),
            spending_limit_credits: CreditLimit::of(100),
        }
    }
}

impl Policy {
    /// The day's limit of `kind`.
    pub fn limit(&self, kind: UsageKind) -> u64 {
        match kind {
            UsageKind::Battles => self.max_daily_battles.get().into(),
            UsageKind::Votes => self.max_daily_votes.get().into(),
            UsageKind::TeamRuns => self.max_daily_team_runs.get().into(),
            UsageKind::ToolCalls => self.max_daily_tool_calls.get().into(),
            UsageKind::Credits => self.spending_limit_credits.get(),
        }
    }
}

lf_core::word_enum!(
    /// What a day's usage counts.
    UsageKind, "usage", [
        /// Battles joined or created.
        Battles = "battles",
        /// Votes cast.
        Votes = "votes",
        /// Team runs started.
        TeamRuns = "team_runs",
        /// Tool calls made.
        ToolCalls = "tool_calls",
        /// Credits spent.
        Credits = "credits",
    ]
);

impl UsageKind {
    /// The policy field that limits it, as errors name it.
    pub const fn cap_field(self) -> &'static str {
        match self {
            UsageKind::Battles => "max_daily_battles",
            UsageKind::Votes => "max_daily_votes",
            UsageKind::TeamRuns => "max_daily_team_runs",
            UsageKind::ToolCalls => "max_daily_tool_calls",
            UsageKind::Credits => "spending_limit_credits",
        }
    }
}

const DAY_MICROS: i64 = 86_400_000_000;

/// A UTC calendar day, the period caps and the credit limit count in: days
/// since 1970-01-01.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UsageDay(i64);

impl UsageDay {
    /// The day `t` falls in.
    pub const fn of(t: Timestamp) -> UsageDay {
        UsageDay(t.as_micros().div_euclid(DAY_MICROS))
    }

    /// The day with this number (as read back from storage).
    pub const fn from_days(days: i64) -> UsageDay {
        UsageDay(days)
    }

    /// Days since 1970-01-01, for storage.
    pub const fn as_days(self) -> i64 {
        self.0
    }

    /// Its first instant, 00:00:00 UTC.
    pub const fn starts_at(self) -> Timestamp {
        Timestamp::from_micros(self.0.saturating_mul(DAY_MICROS))
    }

    /// When its counts reset: 00:00:00 UTC of the next day.
    pub const fn resets_at(self) -> Timestamp {
        Timestamp::from_micros(self.0.saturating_add(1).saturating_mul(DAY_MICROS))
    }
}

impl std::fmt::Display for UsageDay {
    /// `YYYY-MM-DD`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.starts_at().to_datetime().date_naive())
    }
}

/// What an agent used in one day.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub battles: u64,
    pub votes: u64,
    pub team_runs: u64,
    pub tool_calls: u64,
    pub credits: u64,
}

impl Usage {
    /// Each count less `other`'s, none below zero.
    pub fn saturating_sub(self, other: Usage) -> Usage {
        let mut out = self;
        for &k in UsageKind::ALL {
            *out.get_mut(k) = self.get(k).saturating_sub(other.get(k));
        }
        out
    }

    /// Each count the larger of the two.
    pub fn max(self, other: Usage) -> Usage {
        let mut out = self;
        for &k in UsageKind::ALL {
            *out.get_mut(k) = self.get(k).max(other.get(k));
        }
        out
    }

    /// What `asks` add up to, kind by kind.
    pub fn of_asks(asks: &[Ask]) -> Usage {
        let mut out = Usage::default();
        for ask in asks {
            *out.get_mut(ask.kind) += ask.amount;
        }
        out
    }

    /// The count of `kind`.
    pub fn get(&self, kind: UsageKind) -> u64 {
        match kind {
            UsageKind::Battles => self.battles,
            UsageKind::Votes => self.votes,
            UsageKind::TeamRuns => self.team_runs,
            UsageKind::ToolCalls => self.tool_calls,
            UsageKind::Credits => self.credits,
        }
    }

    /// The count of `kind`, to change.
    pub fn get_mut(&mut self, kind: UsageKind) -> &mut u64 {
        match kind {
            UsageKind::Battles => &mut self.battles,
            UsageKind::Votes => &mut self.votes,
            UsageKind::TeamRuns => &mut self.team_runs,
            UsageKind::ToolCalls => &mut self.tool_calls,
            UsageKind::Credits => &mut self.credits,
        }
    }
}

/// One count a call needs: `amount` more of `kind`, if the day's count
/// stays within `limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask {
    pub kind: UsageKind,
    pub amount: u64,
    pub limit: u64,
}

/// What [`crate::AgentStore::reserve_usage`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reservation {
    /// Every ask was counted; the day's usage afterwards.
    Reserved(Usage),
    /// Nothing was counted: `kind`, at `used`, had no room for `asked`
    /// more within `limit`. The first ask, in the order given, that did not
    /// fit.
    Refused { kind: UsageKind, used: u64, asked: u64, limit: u64 },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_resets() {
        // 2026-05-01T23:59:59.999999Z
        let t = Timestamp::from_micros(1_777_679_999_999_999);
        let day = UsageDay::of(t);
        assert_eq!(day.to_string(), "2026-05-01");
        assert_eq!(day.resets_at().to_rfc3339(), "2026-05-02T00:00:00Z");
        assert_eq!(UsageDay::of(day.resets_at()), UsageDay::from_days(day.as_days() + 1));
        assert_eq!(UsageDay::of(day.starts_at()), day);
        // Before 1970 the day still starts at midnight.
        let before = UsageDay::of(Timestamp::from_micros(-1));
        assert_eq!(before.to_string(), "1969-12-31");
        assert_eq!(before.resets_at(), Timestamp::from_micros(0));
    }

    #[test]
    fn caps_and_limits_are_bounded() {
        assert_eq!(Cap::parse("max_daily_votes", 0).unwrap().get(), 0);
        assert_eq!(Cap::parse("max_daily_votes", 10_000).unwrap().get(), 10_000);
        for bad in [-1, 10_001, i64::MAX] {
            let e = Cap::parse("max_daily_votes", bad).unwrap_err();
            assert_eq!(e.details()[0], ("field".into(), lf_core::Detail::Str("max_daily_votes".into())));
        }
        assert!(CreditLimit::parse(1_000_000_000).is_ok());
        assert!(CreditLimit::parse(1_000_000_001).is_err());
        assert!(CreditLimit::parse(-5).is_err());
    }

    #[test]
    fn every_kind_has_its_limit() {
        let p = Policy::default();
        for k in UsageKind::ALL {
            assert!(p.limit(*k) > 0, "{k}");
            let mut u = Usage::default();
            *u.get_mut(*k) = 7;
            assert_eq!(u.get(*k), 7);
        }
    }
}
