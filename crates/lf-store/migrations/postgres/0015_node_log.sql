-- The line a step wrote to its run's log (a logger step's filled message),
-- kept with the step's result: its level and its text, both or neither.
-- Released migrations are never edited: add a new file instead.

ALTER TABLE workflow_node_results
    ADD COLUMN log_level   text CHECK (log_level IN ('debug', 'info', 'warn', 'error')),
    ADD COLUMN log_message text,
    ADD CHECK ((log_level IS NULL) = (log_message IS NULL));
