-- What caused a run and the root of its causal tree (lf-workflow's Run:
-- caused_by, root_run_id), and when that tree, rooted here, reached its
-- bound of runs (tree_full_at, set once). A run made before this is its
-- own root. Conventions as in 0008.
-- Released migrations are never edited: add a new file instead.

ALTER TABLE workflow_runs ADD COLUMN caused_by BLOB REFERENCES workflow_runs (id) ON DELETE SET NULL;
ALTER TABLE workflow_runs ADD COLUMN root_run_id BLOB CHECK (root_run_id IS NULL OR length(root_run_id) = 16);
ALTER TABLE workflow_runs ADD COLUMN tree_full_at INTEGER;
UPDATE workflow_runs SET root_run_id = id;
-- A tree's runs, by workflow: the checks before an event starts a run.
CREATE INDEX workflow_runs_by_root ON workflow_runs (root_run_id, workflow_id);
