-- Workflows that follow events (lf-workflow's schedule module, EventRow):
-- one row per workflow whose head version starts with an event_trigger,
-- written in the same transaction as that head, removed when a head
-- without one replaces it.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE workflow_event_triggers (
    workflow_id uuid PRIMARY KEY REFERENCES workflows (id),
    version_id  uuid NOT NULL,
    event_type  text NOT NULL
);
CREATE INDEX workflow_event_triggers_by_type ON workflow_event_triggers (event_type);
