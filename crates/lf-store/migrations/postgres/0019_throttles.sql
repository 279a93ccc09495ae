-- The HTTP edge's rate limits and sign-in lockouts (lf-auth's
-- ThrottleStore): one small state per key, shared by every process on
-- this database, so that they count together. The state's form is the
-- caller's; a row whose expires_at has passed reads as absent and is
-- deleted by the next sweep.
--
-- Conventions as in 0001: times timestamptz.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE edge_throttles (
    throttle_key text        PRIMARY KEY CHECK (char_length(throttle_key) BETWEEN 1 AND 200),
    state        text        NOT NULL,
    expires_at   timestamptz NOT NULL
);
-- The sweep of expired states.
CREATE INDEX edge_throttles_expiring ON edge_throttles (expires_at);
