-- The HTTP edge's rate limits and sign-in lockouts (lf-auth's
-- ThrottleStore): one small state per key, shared by every process on
-- this database, so that they count together. The state's form is the
-- caller's; a row whose expires_at has passed reads as absent and is
-- deleted by the next sweep.
--
-- Conventions as in 0001: times INTEGER microseconds since the Unix
-- epoch (UTC).
-- Released migrations are never edited: add a new file instead.

CREATE TABLE edge_throttles (
    throttle_key TEXT    PRIMARY KEY CHECK (length(throttle_key) BETWEEN 1 AND 200),
    state        TEXT    NOT NULL,
    expires_at   INTEGER NOT NULL
);
-- The sweep of expired states.
CREATE INDEX edge_throttles_expiring ON edge_throttles (expires_at);
