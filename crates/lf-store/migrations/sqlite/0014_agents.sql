-- AI Lensers (lf-agent's AgentStore): agents, their members and grants,
-- their daily usage, action log, team runs and team events.
--
-- Conventions as in 0001: ids are UUIDs as 16-byte BLOBs, times INTEGER
-- microseconds since the Unix epoch (UTC), booleans 0/1. A usage day is
-- the number of days since 1970-01-01 (UTC). A team run's inputs are a
-- JSON object stored as text, so it reads back with its key order.
-- Agents are never deleted (archiving is a status). Every row of a child
-- table names its agent; an event names its team run and the run's agent
-- (a composite foreign key on agent_team_runs (agent_id, id)).
-- Released migrations are never edited: add a new file instead.

CREATE TABLE agents (
    id                     BLOB    PRIMARY KEY CHECK (length(id) = 16),
    -- Lowercase [a-z0-9_]{4,24}; unique among agents, archived ones
    -- included. The store also refuses a handle a lenser holds, and lenser
    -- creation one an agent holds, under the write lock.
    handle                 TEXT    NOT NULL UNIQUE
                                   CHECK (length(handle) BETWEEN 4 AND 24 AND handle NOT GLOB '*[^a-z0-9_]*'),
    owner_id               BLOB    NOT NULL CHECK (length(owner_id) = 16),
    display_name           TEXT    NOT NULL,
    bio                    TEXT,
    headline               TEXT,
    persona                TEXT,
    model                  TEXT,
    runtime_pref           TEXT    NOT NULL CHECK (runtime_pref IN ('cloud', 'local', 'hybrid')),
    avatar_url             TEXT,
    website_url            TEXT,
    can_join_battles       INTEGER NOT NULL CHECK (can_join_battles IN (0, 1)),
    can_vote               INTEGER NOT NULL CHECK (can_vote IN (0, 1)),
    can_create_battles     INTEGER NOT NULL CHECK (can_create_battles IN (0, 1)),
    max_daily_battles      INTEGER NOT NULL CHECK (max_daily_battles BETWEEN 0 AND 10000),
    max_daily_votes        INTEGER NOT NULL CHECK (max_daily_votes BETWEEN 0 AND 10000),
    max_daily_team_runs    INTEGER NOT NULL CHECK (max_daily_team_runs BETWEEN 0 AND 10000),
    max_daily_tool_calls   INTEGER NOT NULL CHECK (max_daily_tool_calls BETWEEN 0 AND 10000),
    spending_limit_credits INTEGER NOT NULL CHECK (spending_limit_credits BETWEEN 0 AND 1000000000),
    status                 TEXT    NOT NULL CHECK (status IN ('active', 'archived')),
    revision               INTEGER NOT NULL CHECK (revision >= 0),
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL,
    archived_at            INTEGER
);
-- The owner's active agents (the per-owner limit) and listings, newest first.
CREATE INDEX agents_owner ON agents (owner_id, status, created_at DESC, id DESC);
CREATE INDEX agents_newest ON agents (created_at DESC, id DESC);

-- Co-owners and operators; the owner is agents.owner_id, never a member.
CREATE TABLE agent_members (
    -- Insertion order, after added_at.
    seq       INTEGER PRIMARY KEY,
    agent_id  BLOB    NOT NULL REFERENCES agents (id),
    lenser_id BLOB    NOT NULL CHECK (length(lenser_id) = 16),
    role      TEXT    NOT NULL CHECK (role IN ('co_owner', 'operator')),
    added_by  BLOB    NOT NULL CHECK (length(added_by) = 16),
    added_at  INTEGER NOT NULL,
    UNIQUE (agent_id, lenser_id)
);
-- Reach: the agents a lenser is a member of.
CREATE INDEX agent_members_lenser ON agent_members (lenser_id, agent_id);

-- Catalog tools granted to an agent, by the tool's stable id; its name,
-- group and safety class as the catalog gave them.
CREATE TABLE agent_grants (
    agent_id   BLOB    NOT NULL REFERENCES agents (id),
    tool_id    BLOB    NOT NULL CHECK (length(tool_id) = 16),
    tool_name  TEXT    NOT NULL,
    tool_group TEXT    NOT NULL,
    safety     TEXT    NOT NULL CHECK (safety IN ('read', 'write', 'execute', 'destructive')),
    granted_by BLOB    NOT NULL CHECK (length(granted_by) = 16),
    granted_at INTEGER NOT NULL,
    PRIMARY KEY (agent_id, tool_id)
) WITHOUT ROWID;
-- By name: get_grant and revoke_grant by name, listings by name.
CREATE INDEX agent_grants_by_name ON agent_grants (agent_id, tool_name);

-- An agent's counts of one UTC day; a day without a row is all zero.
CREATE TABLE agent_usage (
    agent_id   BLOB    NOT NULL REFERENCES agents (id),
    day        INTEGER NOT NULL,
    battles    INTEGER NOT NULL CHECK (battles >= 0),
    votes      INTEGER NOT NULL CHECK (votes >= 0),
    team_runs  INTEGER NOT NULL CHECK (team_runs >= 0),
    tool_calls INTEGER NOT NULL CHECK (tool_calls >= 0),
    credits    INTEGER NOT NULL CHECK (credits >= 0),
    PRIMARY KEY (agent_id, day)
) WITHOUT ROWID;

-- What an agent did, or was refused.
CREATE TABLE agent_actions (
    id          BLOB    PRIMARY KEY CHECK (length(id) = 16),
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
           AND (tool_id IS NULL) = (tool_safety IS NULL))
);
CREATE INDEX agent_actions_newest ON agent_actions (agent_id, at DESC, id DESC);

-- Workflow runs on an agent's behalf.
CREATE TABLE agent_team_runs (
    id                BLOB    PRIMARY KEY CHECK (length(id) = 16),
    agent_id          BLOB    NOT NULL REFERENCES agents (id),
    workflow_id       BLOB    NOT NULL CHECK (length(workflow_id) = 16),
    -- Its workflow run, once dispatched (no foreign key: the run is the
    -- runner's record).
    workflow_run_id   BLOB    CHECK (workflow_run_id IS NULL OR length(workflow_run_id) = 16),
    inputs            TEXT    NOT NULL CHECK (json_valid(inputs) AND json_type(inputs) = 'object'),
    policy            TEXT    NOT NULL CHECK (policy IN ('auto', 'approval_required')),
    status            TEXT    NOT NULL CHECK (status IN ('queued', 'awaiting_approval', 'running', 'completed',
                                                         'failed', 'cancelled', 'rejected')),
    parent_id         BLOB    REFERENCES agent_team_runs (id),
    depth             INTEGER NOT NULL CHECK (depth BETWEEN 0 AND 8),
    started_by        BLOB    CHECK (started_by IS NULL OR length(started_by) = 16),
    -- The approval decision: approved and at together, or neither.
    decision_approved INTEGER CHECK (decision_approved IN (0, 1)),
    decision_by       BLOB    CHECK (decision_by IS NULL OR length(decision_by) = 16),
    decision_reason   TEXT,
    decision_at       INTEGER,
    error             TEXT,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    finished_at       INTEGER,
    CHECK ((decision_approved IS NULL) = (decision_at IS NULL)),
    -- The parent key of agent_team_events' composite foreign key.
    UNIQUE (agent_id, id)
);
CREATE INDEX agent_team_runs_newest ON agent_team_runs (agent_id, created_at DESC, id DESC);
CREATE INDEX agent_team_runs_status ON agent_team_runs (agent_id, status, created_at DESC, id DESC);

-- A team run's events, numbered from 1 in the order they happened.
CREATE TABLE agent_team_events (
    id          BLOB    PRIMARY KEY CHECK (length(id) = 16),
    team_run_id BLOB    NOT NULL,
    agent_id    BLOB    NOT NULL,
    seq         INTEGER NOT NULL CHECK (seq >= 1),
    kind        TEXT    NOT NULL CHECK (kind IN ('dispatch_queued', 'approval_requested', 'approval_granted',
                                                 'approval_rejected', 'dispatch_started', 'node_started',
                                                 'node_completed', 'node_failed', 'tool_called', 'completed',
                                                 'failed', 'run_cancelled')),
    actor_id    BLOB    CHECK (actor_id IS NULL OR length(actor_id) = 16),
    run_id      BLOB    CHECK (run_id IS NULL OR length(run_id) = 16),
    node        TEXT,
    tool        TEXT,
    note        TEXT,
    at          INTEGER NOT NULL,
    UNIQUE (team_run_id, seq),
    FOREIGN KEY (agent_id, team_run_id) REFERENCES agent_team_runs (agent_id, id)
);
-- Listings, newest first: an agent's events, by kind.
CREATE INDEX agent_team_events_newest ON agent_team_events (agent_id, at DESC, team_run_id DESC, seq DESC);
CREATE INDEX agent_team_events_kind ON agent_team_events (agent_id, kind, at DESC, team_run_id DESC, seq DESC);
