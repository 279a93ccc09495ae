-- Every call an agent makes adds a row to agent_actions. As a rowid table
-- with its primary key on id and its index of an agent's entries newest
-- first, a row went into three B-trees; kept in the order the log is read
-- in (an agent's entries by time), WITHOUT ROWID, it goes into one, which
-- is the list's index too. An entry's id stays unique: it is a UUID v7,
-- and a second write of one entry is still refused by the key.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE agent_actions_by_agent (
    id          BLOB    NOT NULL CHECK (length(id) = 16),
    agent_id    BLOB    NOT NULL REFERENCES agents (id),
    action      TEXT    NOT NULL,
    -- The tool it ran as: all four or none.
    tool_id     BLOB    CHECK (tool_id IS NULL OR length(tool_id) = 16),
    tool_name   TEXT,
    tool_group  TEXT,
    tool_safety TEXT    CHECK (tool_safety IN ('read', 'write', 'execute', 'destructive')),
    arguments   TEXT    NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'refused')),
    -- An lf-core error code (NOT_FOUND, THROTTLED…).
    code        TEXT,
    message     TEXT,
    actor_id    BLOB    CHECK (actor_id IS NULL OR length(actor_id) = 16),
    at          INTEGER NOT NULL,
    CHECK ((tool_id IS NULL) = (tool_name IS NULL) AND (tool_id IS NULL) = (tool_group IS NULL)
           AND (tool_id IS NULL) = (tool_safety IS NULL)),
    PRIMARY KEY (agent_id, at, id)
) WITHOUT ROWID;

INSERT INTO agent_actions_by_agent (id, agent_id, action, tool_id, tool_name, tool_group, tool_safety,
                                    arguments, outcome, code, message, actor_id, at)
    SELECT id, agent_id, action, tool_id, tool_name, tool_group, tool_safety,
           arguments, outcome, code, message, actor_id, at
    FROM agent_actions;

DROP TABLE agent_actions;
ALTER TABLE agent_actions_by_agent RENAME TO agent_actions;
