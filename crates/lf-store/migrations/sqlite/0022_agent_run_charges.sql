-- What the workflow runs an agent started spent, counted against its day
-- (lf-agent's AgentStore::charge_run): one row per run charged, so a
-- charge made again after a crash counts once; and on each run, when its
-- spend was charged (lf-workflow's RunStore::mark_charged). A run that
-- ended before this is never charged. Conventions as in 0008.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE agent_run_charges (
    run_id   BLOB    PRIMARY KEY CHECK (length(run_id) = 16),
    agent_id BLOB    NOT NULL REFERENCES agents (id),
    day      INTEGER NOT NULL,
    credits  INTEGER NOT NULL CHECK (credits >= 0)
) WITHOUT ROWID;

ALTER TABLE workflow_runs ADD COLUMN agent_charged_at INTEGER;
UPDATE workflow_runs SET agent_charged_at = finished_at
    WHERE agent_id IS NOT NULL AND finished_at IS NOT NULL;
-- An agent's ended runs not charged yet: the runner's catch-up.
CREATE INDEX workflow_runs_to_charge ON workflow_runs (finished_at, id)
    WHERE agent_id IS NOT NULL AND agent_charged_at IS NULL AND finished_at IS NOT NULL;
