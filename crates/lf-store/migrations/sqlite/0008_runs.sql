-- Workflow runs and their node results (lf-workflow's RunStore): one row
-- per run (what it was started with, the engine's state without its slots,
-- the next wake and the lease), one row per slot.
--
-- Conventions as in 0001: ids are UUIDs as 16-byte BLOBs, times INTEGER
-- microseconds since the Unix epoch (UTC). Inputs, results and a node's
-- input and output are any JSON value stored as text, so they read back
-- with their key order; NULL is "none", the text `null` a JSON null.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE workflow_runs (
    id                  BLOB    PRIMARY KEY CHECK (length(id) = 16),
    workflow_id         BLOB    NOT NULL REFERENCES workflows (id),
    -- The version it is pinned to, one of its workflow's.
    version_id          BLOB    NOT NULL,
    version             INTEGER NOT NULL CHECK (version BETWEEN 1 AND 4294967295),
    workflow_owner      BLOB    NOT NULL CHECK (length(workflow_owner) = 16),
    started_by          BLOB    NOT NULL CHECK (length(started_by) = 16),
    -- No CHECK: the set of origins grows with the triggers.
    origin              TEXT    NOT NULL,
    -- Runs are not deleted today; should they be, the runs naming one keep
    -- their own record.
    parent_run_id       BLOB    REFERENCES workflow_runs (id) ON DELETE SET NULL,
    resume_from         BLOB    REFERENCES workflow_runs (id) ON DELETE SET NULL,
    idempotency_key     TEXT,
    global_model_id     TEXT,
    created_at          INTEGER NOT NULL,
    cancel_requested_by TEXT,
    status              TEXT    NOT NULL
                                CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
    inputs              TEXT    NOT NULL CHECK (json_valid(inputs)),
    parallel            INTEGER NOT NULL CHECK (parallel BETWEEN 0 AND 4294967295),
    budget_credits      INTEGER CHECK (budget_credits >= 0),
    run_timeout_ms      INTEGER NOT NULL CHECK (run_timeout_ms >= 0),
    node_timeout_ms     INTEGER NOT NULL CHECK (node_timeout_ms >= 0),
    started_at          INTEGER,
    finished_at         INTEGER,
    result              TEXT    CHECK (result IS NULL OR json_valid(result)),
    error_code          TEXT,
    error_message       TEXT,
    error_node          TEXT,
    -- The state's next timer when it was last saved (RunState::next_wake).
    wake_at             INTEGER,
    -- Who holds the run, under which token, until when: all three or none.
    lease_owner         TEXT,
    lease_token         BLOB    CHECK (lease_token IS NULL OR length(lease_token) = 16),
    lease_expires_at    INTEGER,
    FOREIGN KEY (workflow_id, version_id) REFERENCES workflow_versions (workflow_id, id),
    CHECK ((error_code IS NULL) = (error_message IS NULL)),
    CHECK (error_node IS NULL OR error_code IS NOT NULL),
    CHECK ((lease_token IS NULL) = (lease_owner IS NULL)
           AND (lease_token IS NULL) = (lease_expires_at IS NULL))
);
-- A key names the newest run of its workflow made with it.
CREATE INDEX workflow_runs_by_key ON workflow_runs (workflow_id, idempotency_key, created_at DESC)
    WHERE idempotency_key IS NOT NULL;
-- The runs that have not ended, in the order claims take them.
CREATE INDEX workflow_runs_due ON workflow_runs (coalesce(wake_at, created_at), id)
    WHERE status NOT IN ('completed', 'failed', 'cancelled');
-- Listings, newest first: a workflow's runs, and a lenser's (started by,
-- or of a workflow owned by).
CREATE INDEX workflow_runs_of_workflow ON workflow_runs (workflow_id, created_at DESC, id DESC);
CREATE INDEX workflow_runs_started_by ON workflow_runs (started_by, created_at DESC, id DESC);
CREATE INDEX workflow_runs_of_owner ON workflow_runs (workflow_owner, created_at DESC, id DESC);

-- One node's result in a run: `item` is the loop item a node in a loop's
-- body runs for, -1 for a node outside any loop: "none" is one value, so
-- the primary key (whose columns are never NULL) covers every slot.
CREATE TABLE workflow_node_results (
    run_id        BLOB    NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
    node          INTEGER NOT NULL CHECK (node BETWEEN 0 AND 4294967295),
    item          INTEGER NOT NULL CHECK (item BETWEEN -1 AND 4294967295),
    status        TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'retrying', 'completed', 'failed',
                                                     'skipped', 'cancelled')),
    attempt       INTEGER NOT NULL CHECK (attempt BETWEEN 0 AND 4294967295),
    input         TEXT    CHECK (input IS NULL OR json_valid(input)),
    output        TEXT    CHECK (output IS NULL OR json_valid(output)),
    error_code    TEXT,
    error_message TEXT,
    wake_at       INTEGER,
    started_at    INTEGER,
    finished_at   INTEGER,
    model_calls   INTEGER NOT NULL CHECK (model_calls BETWEEN 0 AND 4294967295),
    tokens        INTEGER NOT NULL CHECK (tokens >= 0),
    credits       INTEGER NOT NULL CHECK (credits >= 0),
    CHECK ((error_code IS NULL) = (error_message IS NULL)),
    PRIMARY KEY (run_id, node, item)
);
