-- Accounts, access tokens, OAuth clients, authorization codes and refresh
-- tokens (lf-auth's AuthStore).
--
-- Conventions as in 0001: ids are uuid, times timestamptz. Secrets are never
-- stored: only their SHA-256 (32-byte bytea), each with a unique index to
-- look it up by. Scopes are 'read' or 'read write'. Released migrations are
-- never edited: add a new file instead.

CREATE TABLE lensers (
    id            uuid        PRIMARY KEY,
    -- Lowercase [a-z0-9_]{3,32}; unique.
    handle        text        NOT NULL UNIQUE CHECK (handle ~ '^[a-z0-9_]{3,32}$'),
    -- The argon2id PHC string.
    password_hash text        NOT NULL,
    created_at    timestamptz NOT NULL
);

CREATE TABLE oauth_clients (
    -- lf_client_ + 32 hex digits.
    id            text        PRIMARY KEY,
    name          text        NOT NULL,
    -- In registration order.
    redirect_uris text[]      NOT NULL,
    created_at    timestamptz NOT NULL
);

CREATE TABLE access_tokens (
    id           uuid        PRIMARY KEY,
    token_hash   bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    lenser_id    uuid        NOT NULL REFERENCES lensers (id),
    scopes       text        NOT NULL CHECK (scopes IN ('read', 'read write')),
    -- NULL for an admin-issued token.
    client_id    text        REFERENCES oauth_clients (id),
    family_id    uuid,
    -- The audience URL; NULL: any resource of this server.
    resource     text,
    label        text,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz,
    revoked_at   timestamptz,
    last_used_at timestamptz
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
    code_hash      bytea       PRIMARY KEY CHECK (length(code_hash) = 32),
    client_id      text        NOT NULL REFERENCES oauth_clients (id),
    lenser_id      uuid        NOT NULL REFERENCES lensers (id),
    redirect_uri   text        NOT NULL,
    code_challenge text        NOT NULL,
    scopes         text        NOT NULL CHECK (scopes IN ('read', 'read write')),
    resource       text,
    family_id      uuid        NOT NULL,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz
);
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

CREATE TABLE refresh_tokens (
    id         uuid        PRIMARY KEY,
    token_hash bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    family_id  uuid        NOT NULL,
    client_id  text        NOT NULL REFERENCES oauth_clients (id),
    lenser_id  uuid        NOT NULL REFERENCES lensers (id),
    scopes     text        NOT NULL CHECK (scopes IN ('read', 'read write')),
    resource   text,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    revoked_at timestamptz
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at);
