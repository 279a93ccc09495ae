-- SQLite checks a CHECK's `x IN ('a', 'b', 'c')` of three or more words by
-- building a lookup table for it, and inside a CHECK it builds that table
-- anew for every row written: two of them for every entry of the action
-- log, the table every call an agent makes adds a row to. A CASE says
-- the same, NULL passing as it did, and builds nothing. The same table
-- otherwise, rows kept.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE agent_actions_checked (
    id          BLOB    NOT NULL CHECK (length(id) = 16),
    agent_id    BLOB    NOT NULL REFERENCES agents (id),
    action      TEXT    NOT NULL,
    -- The tool it ran as: all four or none.
    tool_id     BLOB    CHECK (tool_id IS NULL OR length(tool_id) = 16),
    tool_name   TEXT,
    tool_group  TEXT,
    tool_safety TEXT    CHECK (CASE tool_safety WHEN 'read' THEN 1 WHEN 'write' THEN 1 WHEN 'execute' THEN 1
                               WHEN 'destructive' THEN 1 ELSE tool_safety IS NULL END),
    arguments   TEXT    NOT NULL,
    outcome     TEXT    NOT NULL CHECK (CASE outcome WHEN 'succeeded' THEN 1 WHEN 'failed' THEN 1
                                                WHEN 'refused' THEN 1 ELSE 0 END),
    -- An lf-core error code (NOT_FOUND, THROTTLED…).
    code        TEXT,
    message     TEXT,
    actor_id    BLOB    CHECK (actor_id IS NULL OR length(actor_id) = 16),
    at          INTEGER NOT NULL,
    CHECK ((tool_id IS NULL) = (tool_name IS NULL) AND (tool_id IS NULL) = (tool_group IS NULL)
           AND (tool_id IS NULL) = (tool_safety IS NULL)),
    PRIMARY KEY (agent_id, at, id)
) WITHOUT ROWID;

INSERT INTO agent_actions_checked (id, agent_id, action, tool_id, tool_name, tool_group, tool_safety,
                                   arguments, outcome, code, message, actor_id, at)
    SELECT id, agent_id, action, tool_id, tool_name, tool_group, tool_safety,
           arguments, outcome, code, message, actor_id, at
    FROM agent_actions;

DROP TABLE agent_actions;
ALTER TABLE agent_actions_checked RENAME TO agent_actions;
