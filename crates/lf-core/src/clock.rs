use std::sync::Mutex;

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};

/// A UTC instant with microsecond precision (what PostgreSQL keeps), so a
/// value survives a round trip through any store unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    pub const fn from_micros(micros: i64) -> Self {
        Self(micros)
    }
    pub const fn as_micros(&self) -> i64 {
        self.0
    }
    pub fn from_datetime(dt: DateTime<Utc>) -> Self {
        Self(dt.timestamp_micros())
    }
    pub fn to_datetime(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_micros(self.0).unwrap_or_default()
    }
    /// RFC 3339 in UTC, e.g. `2026-05-01T00:00:00.123456Z`.
    pub fn to_rfc3339(&self) -> String {
        self.to_datetime().to_rfc3339_opts(SecondsFormat::AutoSi, true)
    }
    pub fn plus_micros(&self, micros: i64) -> Self {
        Self(self.0.saturating_add(micros))
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

/// Where time comes from, so tests can fix it.
pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;
}

/// The wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_datetime(Utc::now())
    }
}

/// A clock that only moves when told to; each reading advances it by `step`
/// so that successive events keep a strict order.
#[derive(Debug)]
pub struct FixedClock {
    now: Mutex<Timestamp>,
    step: TimeDelta,
}

impl FixedClock {
    pub fn new(start: Timestamp, step: TimeDelta) -> Self {
        Self { now: Mutex::new(start), step }
    }
    pub fn advance(&self, by: TimeDelta) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        *now = now.plus_micros(by.num_microseconds().unwrap_or(i64::MAX));
    }
}

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        let t = *now;
        *now = now.plus_micros(self.step.num_microseconds().unwrap_or(0));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trip() {
        let t = Timestamp::from_micros(1_777_593_600_123_456);
        assert_eq!(t.to_rfc3339(), "2026-05-01T00:00:00.123456Z");
        assert_eq!(Timestamp::from_datetime(t.to_datetime()), t);
    }

    #[test]
    fn fixed_clock_steps() {
        let c = FixedClock::new(Timestamp::from_micros(0), TimeDelta::microseconds(5));
        assert_eq!(c.now().as_micros(), 0);
        assert_eq!(c.now().as_micros(), 5);
        c.advance(TimeDelta::seconds(1));
        assert_eq!(c.now().as_micros(), 1_000_010);
    }
}
