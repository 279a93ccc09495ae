-- Scheduled workflows (lf-workflow's schedule module): one row per workflow
-- whose head version starts with a schedule_trigger, written in the same
-- transaction as that head, removed when a head without one replaces it.
-- next_fire_at is the tick the schedule waits for; a scheduler moves it
-- forward only from the value it read (compare and set), and the run of a
-- tick carries the tick as its idempotency key.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE workflow_schedules (
    workflow_id  uuid        PRIMARY KEY REFERENCES workflows (id),
    -- The head version the schedule was read from.
    version_id   uuid        NOT NULL,
    cron         text        NOT NULL,
    timezone     text        NOT NULL,
    next_fire_at timestamptz NOT NULL
);
CREATE INDEX workflow_schedules_due ON workflow_schedules (next_fire_at);
