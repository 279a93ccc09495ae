//! Schedules: when a workflow whose head starts with a `schedule_trigger`
//! fires. A schedule is a five-field cron expression read in an IANA time
//! zone; its next fire time is kept in UTC.
//!
//! - Across a DST change the zone's rules decide, as Vixie cron does: a
//!   fixed time that falls in a spring-forward gap fires just after the
//!   gap on the same day; a fixed time in a fall-back overlap fires once,
//!   at its first occurrence; wildcard and step fields fire for each wall
//!   clock match (see `croner`).
//! - After downtime a schedule fires once, for the tick it was waiting
//!   for, and then waits for the first tick after the present
//!   ([`Schedule::after_firing`]), not once per missed tick.
//! - Across several processes each tick fires once: the tick is the run's
//!   idempotency key ([`ScheduleRow::tick_key`]), so two processes firing
//!   it at once make one run, and the row's next fire time moves only from
//!   the value it was read with ([`crate::WorkflowStore::advance_schedule`]).

use std::str::FromStr;

use chrono::Utc;
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds};
use lf_core::{LenserId, Timestamp, WorkflowId};
use serde_json::{Value, json};

use crate::model::{WorkflowVersion, WorkflowVersionId};

/// The node type that makes a workflow scheduled.
pub const SCHEDULE_TRIGGER: &str = "schedule_trigger";

/// A parsed schedule.
#[derive(Clone, Debug)]
pub struct Schedule {
    cron: Cron,
    zone: Tz,
}

impl Schedule {
    /// A five-field expression (minute hour day-of-month month
    /// day-of-week; names, `L`, `W` and `#` allowed) in `timezone`.
    pub fn parse(cron: &str, timezone: &str) -> Result<Schedule, String> {
        let zone = parse_zone(timezone)?;
        let cron = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .build()
            .parse(cron)
            .map_err(|e| format!("is not a cron expression this server can schedule: {e}"))?;
        Ok(Schedule { cron, zone })
    }

    /// The schedule of a version's `schedule_trigger`, if its trigger is one
    /// (its config as validated: `cron`, `timezone` default UTC).
    pub fn of_version(version: &WorkflowVersion) -> Option<(String, String, Result<Schedule, String>)> {
        let node = version.nodes.iter().find(|n| n.node_type.as_str() == SCHEDULE_TRIGGER)?;
        let pick = |keys: &[&str]| keys.iter().find_map(|k| node.config.get(*k).and_then(Value::as_str));
        let cron = pick(&["cron", "cronExpression"]).unwrap_or_default().to_owned();
        let zone = pick(&["timezone", "timeZone"]).unwrap_or("UTC").to_owned();
        let parsed = Schedule::parse(&cron, &zone);
        Some((cron, zone, parsed))
    }

    /// The first tick strictly after `after`, in UTC; `None` when there is
    /// none before the year 5000.
    pub fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        let local = after.to_datetime().with_timezone(&self.zone);
        let next = self.cron.find_next_occurrence(&local, false).ok()?;
        Some(Timestamp::from_datetime(next.with_timezone(&Utc)))
    }

    /// Where a schedule goes once the tick `fired` fired at `now`: the first
    /// tick after both, so that any ticks missed while nothing ran are
    /// skipped, not fired one by one.
    pub fn after_firing(&self, fired: Timestamp, now: Timestamp) -> Option<Timestamp> {
        self.next_after(fired.max(now))
    }
}

/// Whether a five-field expression parses and ever fires (`0 9 31 2 *`,
/// 31 February, parses but never does).
pub fn check_fires(cron: &str) -> Result<(), String> {
    let s = Schedule::parse(cron, "UTC")?;
    match s.next_after(Timestamp::from_micros(0)) {
        Some(_) => Ok(()),
        None => Err("never fires: no date matches it (such as 31 February)".to_owned()),
    }
}

/// An IANA zone name (`UTC` included).
pub fn parse_zone(timezone: &str) -> Result<Tz, String> {
    Tz::from_str(timezone).map_err(|_| {
        format!(
            "must be an IANA time zone such as Europe/Istanbul, America/New_York or UTC, got \"{}\"",
            lf_core::clip(timezone, 60)
        )
    })
}

/// A scheduled workflow as the store keeps it: its head's schedule and
/// next fire time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleRow {
    pub workflow_id: WorkflowId,
    pub owner: LenserId,
    /// The head version the schedule was read from.
    pub version_id: WorkflowVersionId,
    pub cron: String,
    pub timezone: String,
    /// The tick it waits for, in UTC.
    pub next_fire_at: Timestamp,
}

impl ScheduleRow {
    /// The row for a new head `version` of a workflow owned by `owner`,
    /// made at `now`: `None` when the head is not scheduled (or its
    /// schedule has no tick left).
    pub fn for_head(owner: LenserId, version: &WorkflowVersion, now: Timestamp) -> Option<ScheduleRow> {
        let (cron, timezone, parsed) = Schedule::of_version(version)?;
        let next_fire_at = parsed.ok()?.next_after(now)?;
        Some(ScheduleRow {
            workflow_id: version.workflow_id,
            owner,
            version_id: version.id,
            cron,
            timezone,
            next_fire_at,
        })
    }

    /// The idempotency key of the run for the tick it waits for.
    pub fn tick_key(&self) -> String {
        format!("schedule:{}", self.next_fire_at.to_rfc3339())
    }

    /// The run's inputs for that tick: `{scheduled_for, timezone}`, the
    /// instant in UTC.
    pub fn inputs(&self) -> serde_json::Map<String, Value> {
        let Value::Object(m) = json!({
            "scheduled_for": self.next_fire_at.to_rfc3339(),
            "timezone": self.timezone,
        }) else {
            unreachable!("an object literal")
        };
        m
    }
}
