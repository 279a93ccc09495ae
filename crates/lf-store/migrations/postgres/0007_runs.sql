-- Workflow runs and their node results (lf-workflow's RunStore): one row
-- per run (what it was started with, the engine's state without its slots,
-- the next wake and the lease), one row per slot.
--
-- Conventions as in 0001: ids are uuid, times timestamptz, numbers bigint
-- (u32 and u64 in Rust). Inputs, results and a node's input and output are
-- any JSON value stored as text in the form the SQLite schema uses, so they
-- read back with their key order (jsonb would sort the keys); NULL is
-- "none", the text `null` a JSON null.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE workflow_runs (
    id                  uuid        PRIMARY KEY,
    workflow_id         uuid        NOT NULL REFERENCES workflows (id),
    -- The version it is pinned to, one of its workflow's.
    version_id          uuid        NOT NULL,
    version             bigint      NOT NULL CHECK (version BETWEEN 1 AND 4294967295),
    workflow_owner      uuid        NOT NULL,
    started_by          uuid        NOT NULL,
    -- No CHECK: the set of origins grows with the triggers.
    origin              text        NOT NULL,
    -- Runs are not deleted today; should they be, the runs naming one keep
    -- their own record.
    parent_run_id       uuid        REFERENCES workflow_runs (id) ON DELETE SET NULL,
    resume_from         uuid        REFERENCES workflow_runs (id) ON DELETE SET NULL,
    idempotency_key     text,
    global_model_id     text,
    created_at          timestamptz NOT NULL,
    cancel_requested_by text,
    status              text        NOT NULL
                                    CHECK (status IN ('pending', 'running', 'completed', 'failed',
                                                      'cancelled')),
    inputs              text        NOT NULL CHECK (json_typeof(inputs::json) IS NOT NULL),
    parallel            bigint      NOT NULL CHECK (parallel BETWEEN 0 AND 4294967295),
    budget_credits      bigint      CHECK (budget_credits >= 0),
    run_timeout_ms      bigint      NOT NULL CHECK (run_timeout_ms >= 0),
    node_timeout_ms     bigint      NOT NULL CHECK (node_timeout_ms >= 0),
    started_at          timestamptz,
    finished_at         timestamptz,
    result              text        CHECK (result IS NULL OR json_typeof(result::json) IS NOT NULL),
    error_code          text,
    error_message       text,
    error_node          text,
    -- The state's next timer when it was last saved (RunState::next_wake).
    wake_at             timestamptz,
    -- Who holds the run, under which token, until when: all three or none.
    lease_owner         text,
    lease_token         uuid,
    lease_expires_at    timestamptz,
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
CREATE INDEX workflow_runs_due ON workflow_runs ((coalesce(wake_at, created_at)), id)
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
    run_id        uuid        NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
    node          bigint      NOT NULL CHECK (node BETWEEN 0 AND 4294967295),
    item          bigint      NOT NULL CHECK (item BETWEEN -1 AND 4294967295),
    status        text        NOT NULL CHECK (status IN ('pending', 'running', 'retrying', 'completed',
                                                         'failed', 'skipped', 'cancelled')),
    attempt       bigint      NOT NULL CHECK (attempt BETWEEN 0 AND 4294967295),
    input         text        CHECK (input IS NULL OR json_typeof(input::json) IS NOT NULL),
    output        text        CHECK (output IS NULL OR json_typeof(output::json) IS NOT NULL),
    error_code    text,
    error_message text,
    wake_at       timestamptz,
    started_at    timestamptz,
    finished_at   timestamptz,
    model_calls   bigint      NOT NULL CHECK (model_calls BETWEEN 0 AND 4294967295),
    tokens        bigint      NOT NULL CHECK (tokens >= 0),
    credits       bigint      NOT NULL CHECK (credits >= 0),
    CHECK ((error_code IS NULL) = (error_message IS NULL)),
    PRIMARY KEY (run_id, node, item)
);
