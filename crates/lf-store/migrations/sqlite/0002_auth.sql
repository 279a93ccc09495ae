-- Accounts, access tokens, OAuth clients, authorization codes and refresh
-- tokens (lf-auth's AuthStore).
--
-- Conventions as in 0001: ids are UUIDs as 16-byte BLOBs, times INTEGER
-- microseconds since the Unix epoch (UTC). Secrets are never stored: only
-- their SHA-256 (32-byte BLOBs), each with a unique index to look it up by.
-- Scopes are 'read' or 'read write'. Released migrations are never edited:
-- add a new file instead.

CREATE TABLE lensers (
    id            BLOB    PRIMARY KEY CHECK (length(id) = 16),
    -- Lowercase [a-z0-9_]{3,32}; unique.
    handle        TEXT    NOT NULL UNIQUE
                          CHECK (length(handle) BETWEEN 3 AND 32 AND handle NOT GLOB '*[^a-z0-9_]*'),
    -- The argon2id PHC string.
    password_hash TEXT    NOT NULL,
    created_at    INTEGER NOT NULL
);

CREATE TABLE oauth_clients (
    -- lf_client_ + 32 hex digits.
    id            TEXT    PRIMARY KEY,
    name          TEXT    NOT NULL,
    -- A JSON array of strings, in registration order.
    redirect_uris TEXT    NOT NULL CHECK (json_valid(redirect_uris) AND json_type(redirect_uris) = 'array'),
    created_at    INTEGER NOT NULL
);

CREATE TABLE access_tokens (
    id           BLOB    PRIMARY KEY CHECK (length(id) = 16),
    token_hash   BLOB    NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    lenser_id    BLOB    NOT NULL REFERENCES lensers (id),
    scopes       TEXT    NOT NULL CHECK (scopes IN ('read', 'read write')),
    -- NULL for an admin-issued token.
    client_id    TEXT    REFERENCES oauth_clients (id),
    family_id    BLOB    CHECK (family_id IS NULL OR length(family_id) = 16),
    -- The audience URL; NULL: any resource of this server.
    resource     TEXT,
    label        TEXT,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    revoked_at   INTEGER,
    last_used_at INTEGER
);
-- list_tokens of one lenser, newest first.
CREATE INDEX access_tokens_lenser ON access_tokens (lenser_id, created_at DESC, id DESC);
-- list_tokens of everyone, newest first.
CREATE INDEX access_tokens_newest ON access_tokens (created_at DESC, id DESC);
-- revoke_family.
CREATE INDEX access_tokens_family ON access_tokens (family_id) WHERE family_id IS NOT NULL;
-- purge_expired.
CREATE INDEX access_tokens_expiry ON access_tokens (expires_at) WHERE family_id IS NOT NULL;

CREATE TABLE oauth_codes (
    code_hash      BLOB    PRIMARY KEY CHECK (length(code_hash) = 32),
    client_id      TEXT    NOT NULL REFERENCES oauth_clients (id),
    lenser_id      BLOB    NOT NULL REFERENCES lensers (id),
    redirect_uri   TEXT    NOT NULL,
    code_challenge TEXT    NOT NULL,
    scopes         TEXT    NOT NULL CHECK (scopes IN ('read', 'read write')),
    resource       TEXT,
    family_id      BLOB    NOT NULL CHECK (length(family_id) = 16),
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    used_at        INTEGER
) WITHOUT ROWID;
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

CREATE TABLE refresh_tokens (
    id         BLOB    PRIMARY KEY CHECK (length(id) = 16),
    token_hash BLOB    NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    family_id  BLOB    NOT NULL CHECK (length(family_id) = 16),
    client_id  TEXT    NOT NULL REFERENCES oauth_clients (id),
    lenser_id  BLOB    NOT NULL REFERENCES lensers (id),
    scopes     TEXT    NOT NULL CHECK (scopes IN ('read', 'read write')),
    resource   TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER,
    revoked_at INTEGER
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at);
