-- The state workflow steps keep between runs, per workflow owner
-- (lf-workflow's KvStore): the entries of the kv and cache steps, and the
-- passes of rate_limit steps.
--
-- Conventions as in 0001: ids are uuid, times timestamptz. A value is any
-- JSON value stored as text in the form the SQLite schema uses, so it
-- reads back with its key order (jsonb would sort the keys).
-- Released migrations are never edited: add a new file instead.

-- One entry: the kv and cache namespaces never see each other. An entry
-- whose expires_at has passed reads as absent and is deleted at its
-- owner's next write.
CREATE TABLE kv_entries (
    owner_id   uuid        NOT NULL,
    namespace  text        NOT NULL CHECK (namespace IN ('kv', 'cache')),
    entry_key  text        NOT NULL CHECK (char_length(entry_key) BETWEEN 1 AND 256),
    value      text        NOT NULL CHECK (json_typeof(value::json) IS NOT NULL),
    expires_at timestamptz,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (owner_id, namespace, entry_key)
);
-- The purge of an owner's expired entries.
CREATE INDEX kv_entries_expiring ON kv_entries (owner_id, expires_at) WHERE expires_at IS NOT NULL;

-- One pass through a rate_limit step (owner, workflow, step) by one
-- attempt (its idempotency key): at most one row per attempt, so the
-- same attempt asking again is not counted twice. Passes older than the
-- step's window are deleted when the step next asks.
CREATE TABLE rate_limit_passes (
    owner_id    uuid        NOT NULL,
    workflow_id uuid        NOT NULL,
    step        text        NOT NULL,
    attempt_key text        NOT NULL,
    passed_at   timestamptz NOT NULL,
    PRIMARY KEY (owner_id, workflow_id, step, attempt_key)
);
CREATE INDEX rate_limit_passes_in_window ON rate_limit_passes (owner_id, workflow_id, step, passed_at);
