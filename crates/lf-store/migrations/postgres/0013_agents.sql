-- AI Lensers (lf-agent's AgentStore): agents, their members and grants,
-- their daily usage, action log, team runs and team events.
--
-- Conventions as in 0001: ids are uuid, times timestamptz, numbers bigint
-- (what the stores read and write). A usage day is the number of days
-- since 1970-01-01 (UTC). A team run's inputs are a JSON object stored as
-- text in the form the SQLite schema uses, so it reads back with its key
-- order (jsonb would sort the keys). Agents are never deleted (archiving
-- is a status). Every row of a child table names its agent; an event
-- names its team run and the run's agent (a composite foreign key on
-- agent_team_runs (agent_id, id)).
-- Released migrations are never edited: add a new file instead.

CREATE TABLE agents (
    id                     uuid        PRIMARY KEY,
    -- Lowercase [a-z0-9_]{4,24}; unique among agents, archived ones
    -- included. The store also refuses a handle a lenser holds, and lenser
    -- creation one an agent holds, both under an advisory lock on the handle.
    handle                 text        NOT NULL UNIQUE CHECK (handle ~ '^[a-z0-9_]{4,24}$'),
    owner_id               uuid        NOT NULL,
    display_name           text        NOT NULL,
    bio                    text,
    headline               text,
    persona                text,
    model                  text,
    runtime_pref           text        NOT NULL CHECK (runtime_pref IN ('cloud', 'local', 'hybrid')),
    avatar_url             text,
    website_url            text,
    can_join_battles       boolean     NOT NULL,
    can_vote               boolean     NOT NULL,
    can_create_battles     boolean     NOT NULL,
    max_daily_battles      bigint      NOT NULL CHECK (max_daily_battles BETWEEN 0 AND 10000),
    max_daily_votes        bigint      NOT NULL CHECK (max_daily_votes BETWEEN 0 AND 10000),
    max_daily_team_runs    bigint      NOT NULL CHECK (max_daily_team_runs BETWEEN 0 AND 10000),
    max_daily_tool_calls   bigint      NOT NULL CHECK (max_daily_tool_calls BETWEEN 0 AND 10000),
    spending_limit_credits bigint      NOT NULL CHECK (spending_limit_credits BETWEEN 0 AND 1000000000),
    status                 text        NOT NULL CHECK (status IN ('active', 'archived')),
    revision               bigint      NOT NULL CHECK (revision >= 0),
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL,
    archived_at            timestamptz
);
-- The owner's active agents (the per-owner limit) and listings, newest first.
CREATE INDEX agents_owner ON agents (owner_id, status, created_at DESC, id DESC);
CREATE INDEX agents_newest ON agents (created_at DESC, id DESC);

-- Co-owners and operators; the owner is agents.owner_id, never a member.
CREATE TABLE agent_members (
    -- Insertion order, after added_at.
    seq       bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent_id  uuid        NOT NULL REFERENCES agents (id),
    lenser_id uuid        NOT NULL,
    role      text        NOT NULL CHECK (role IN ('co_owner', 'operator')),
    added_by  uuid        NOT NULL,
    added_at  timestamptz NOT NULL,
    UNIQUE (agent_id, lenser_id)
);
-- Reach: the agents a lenser is a member of.
CREATE INDEX agent_members_lenser ON agent_members (lenser_id, agent_id);

-- Catalog tools granted to an agent, by the tool's stable id; its name,
-- group and safety class as the catalog gave them.
CREATE TABLE agent_grants (
    agent_id   uuid        NOT NULL REFERENCES agents (id),
    tool_id    uuid        NOT NULL,
    tool_name  text        NOT NULL,
    tool_group text        NOT NULL,
    safety     text        NOT NULL CHECK (safety IN ('read', 'write', 'execute', 'destructive')),
    granted_by uuid        NOT NULL,
    granted_at timestamptz NOT NULL,
    PRIMARY KEY (agent_id, tool_id)
);
-- By name: get_grant and revoke_grant by name, listings by name.
CREATE INDEX agent_grants_by_name ON agent_grants (agent_id, tool_name);

-- An agent's counts of one UTC day; a day without a row is all zero.
CREATE TABLE agent_usage (
    agent_id   uuid   NOT NULL REFERENCES agents (id),
    day        bigint NOT NULL,
    battles    bigint NOT NULL CHECK (battles >= 0),
    votes      bigint NOT NULL CHECK (votes >= 0),
    team_runs  bigint NOT NULL CHECK (team_runs >= 0),
    tool_calls bigint NOT NULL CHECK (tool_calls >= 0),
    credits    bigint NOT NULL CHECK (credits >= 0),
    PRIMARY KEY (agent_id, day)
);

-- What an agent did, or was refused.
CREATE TABLE agent_actions (
    id          uuid        PRIMARY KEY,
    agent_id    uuid        NOT NULL REFERENCES agents (id),
    action      text        NOT NULL,
    -- The tool it ran as: all four or none.
    tool_id     uuid,
    tool_name   text,
    tool_group  text,
    tool_safety text        CHECK (tool_safety IN ('read', 'write', 'execute', 'destructive')),
    arguments   text        NOT NULL,
    outcome     text        NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'refused')),
    -- An lf-core error code (NOT_FOUND, THROTTLED…).
    code        text,
    message     text,
    actor_id    uuid,
    at          timestamptz NOT NULL,
    CHECK ((tool_id IS NULL) = (tool_name IS NULL) AND (tool_id IS NULL) = (tool_group IS NULL)
           AND (tool_id IS NULL) = (tool_safety IS NULL))
);
CREATE INDEX agent_actions_newest ON agent_actions (agent_id, at DESC, id DESC);

-- Workflow runs on an agent's behalf.
CREATE TABLE agent_team_runs (
    id                uuid        PRIMARY KEY,
    agent_id          uuid        NOT NULL REFERENCES agents (id),
    workflow_id       uuid        NOT NULL,
    -- Its workflow run, once dispatched (no foreign key: the run is the
    -- runner's record).
    workflow_run_id   uuid,
    inputs            text        NOT NULL CHECK (json_typeof(inputs::json) = 'object'),
    policy            text        NOT NULL CHECK (policy IN ('auto', 'approval_required')),
    status            text        NOT NULL CHECK (status IN ('queued', 'awaiting_approval', 'running',
                                                             'completed', 'failed', 'cancelled', 'rejected')),
    parent_id         uuid        REFERENCES agent_team_runs (id),
    depth             bigint      NOT NULL CHECK (depth BETWEEN 0 AND 8),
    started_by        uuid,
    -- The approval decision: approved and at together, or neither.
    decision_approved boolean,
    decision_by       uuid,
    decision_reason   text,
    decision_at       timestamptz,
    error             text,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    finished_at       timestamptz,
    CHECK ((decision_approved IS NULL) = (decision_at IS NULL)),
    -- The parent key of agent_team_events' composite foreign key.
    UNIQUE (agent_id, id)
);
CREATE INDEX agent_team_runs_newest ON agent_team_runs (agent_id, created_at DESC, id DESC);
CREATE INDEX agent_team_runs_status ON agent_team_runs (agent_id, status, created_at DESC, id DESC);

-- A team run's events, numbered from 1 in the order they happened.
CREATE TABLE agent_team_events (
    id          uuid        PRIMARY KEY,
    team_run_id uuid        NOT NULL,
    agent_id    uuid        NOT NULL,
    seq         bigint      NOT NULL CHECK (seq >= 1),
    kind        text        NOT NULL CHECK (kind IN ('dispatch_queued', 'approval_requested',
                                                     'approval_granted', 'approval_rejected',
                                                     'dispatch_started', 'node_started', 'node_completed',
                                                     'node_failed', 'tool_called', 'completed', 'failed',
                                                     'run_cancelled')),
    actor_id    uuid,
    run_id      uuid,
    node        text,
    tool        text,
    note        text,
    at          timestamptz NOT NULL,
    UNIQUE (team_run_id, seq),
    FOREIGN KEY (agent_id, team_run_id) REFERENCES agent_team_runs (agent_id, id)
);
-- Listings, newest first: an agent's events, by kind.
CREATE INDEX agent_team_events_newest ON agent_team_events (agent_id, at DESC, team_run_id DESC, seq DESC);
CREATE INDEX agent_team_events_kind ON agent_team_events (agent_id, kind, at DESC, team_run_id DESC, seq DESC);
