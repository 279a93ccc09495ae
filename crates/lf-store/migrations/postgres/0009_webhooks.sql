-- Webhook secrets (lf-workflow's WebhookStore): one per workflow whose
-- trigger is, or was, a webhook trigger. Only the SHA-256 of the secret is
-- stored; the secret itself is shown once, in the answer that made it.
--
-- Conventions as in 0001: ids are uuid, times timestamptz.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE workflow_webhooks (
    workflow_id uuid        PRIMARY KEY REFERENCES workflows (id),
    secret_hash bytea       NOT NULL CHECK (length(secret_hash) = 32),
    -- When this secret was made (the workflow's creation, or the last rotation).
    created_at  timestamptz NOT NULL
);
