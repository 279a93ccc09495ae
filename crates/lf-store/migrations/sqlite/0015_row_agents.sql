-- The AI Lenser that wrote a row for its owner (DESIGN §5: an agent is the
-- actor of every row it writes; its owner owns the row). NULL when a person
-- or the service wrote it. Submissions name their writer in submitted_by
-- and votes in voter_id already; the agent's action log names it for every
-- call, changes of existing rows included.
-- Released migrations are never edited: add a new file instead.

ALTER TABLE lenses            ADD COLUMN agent_id BLOB CHECK (agent_id IS NULL OR length(agent_id) = 16);
ALTER TABLE lens_versions     ADD COLUMN agent_id BLOB CHECK (agent_id IS NULL OR length(agent_id) = 16);
ALTER TABLE lens_runs         ADD COLUMN agent_id BLOB CHECK (agent_id IS NULL OR length(agent_id) = 16);
ALTER TABLE battles           ADD COLUMN agent_id BLOB CHECK (agent_id IS NULL OR length(agent_id) = 16);
ALTER TABLE battle_contenders ADD COLUMN agent_id BLOB CHECK (agent_id IS NULL OR length(agent_id) = 16);
ALTER TABLE workflows         ADD COLUMN agent_id BLOB CHECK (agent_id IS NULL OR length(agent_id) = 16);
ALTER TABLE workflow_versions ADD COLUMN agent_id BLOB CHECK (agent_id IS NULL OR length(agent_id) = 16);
ALTER TABLE workflow_runs     ADD COLUMN agent_id BLOB CHECK (agent_id IS NULL OR length(agent_id) = 16);
