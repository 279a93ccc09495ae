-- Webhook secrets (lf-workflow's WebhookStore): one per workflow whose
-- trigger is, or was, a webhook trigger. Only the SHA-256 of the secret is
-- stored; the secret itself is shown once, in the answer that made it.
--
-- Conventions as in 0001: ids are UUIDs as 16-byte BLOBs, times INTEGER
-- microseconds since the Unix epoch (UTC).
-- Released migrations are never edited: add a new file instead.

CREATE TABLE workflow_webhooks (
    workflow_id BLOB    PRIMARY KEY REFERENCES workflows (id),
    secret_hash BLOB    NOT NULL CHECK (length(secret_hash) = 32),
    -- When this secret was made (the workflow's creation, or the last rotation).
    created_at  INTEGER NOT NULL
);
