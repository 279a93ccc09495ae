-- The line a step wrote to its run's log (a logger step's filled message),
-- kept with the step's result: its level and its text, both or neither.
-- The level's CHECK is a CASE, not an IN list (see 0018): node results are
-- written at every step of every run.
-- Released migrations are never edited: add a new file instead.

ALTER TABLE workflow_node_results ADD COLUMN log_level TEXT
    CHECK (CASE log_level WHEN 'debug' THEN 1 WHEN 'info' THEN 1 WHEN 'warn' THEN 1 WHEN 'error' THEN 1
           ELSE log_level IS NULL END);
ALTER TABLE workflow_node_results ADD COLUMN log_message TEXT
    CHECK ((log_message IS NULL) = (log_level IS NULL));
