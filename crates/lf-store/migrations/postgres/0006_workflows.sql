-- Workflows, their immutable versions with nodes and edges (lf-workflow's
-- WorkflowStore), and saved connections with their sealed secrets
-- (lf-workflow's ConnectionStore).
--
-- Conventions as in 0001: ids are uuid, times timestamptz, numbers bigint
-- (u32 in Rust, beyond integer). A node's parameters and config and an
-- edge's condition are JSON objects stored as text in the form the SQLite
-- schema uses, so they read back with their key order (jsonb would sort
-- the keys); a pick (output_key) is its text. Every node and edge names its
-- version, and an edge's ends must be nodes of that version (composite
-- foreign keys on workflow_nodes (version_id, id)).
-- Released migrations are never edited: add a new file instead.

CREATE TABLE workflows (
    id              uuid        PRIMARY KEY,
    owner_id        uuid        NOT NULL,
    title           text        NOT NULL,
    description     text,
    visibility      text        NOT NULL CHECK (visibility IN ('public', 'unlisted', 'private')),
    head_version_id uuid        NOT NULL,
    head_version    bigint      NOT NULL CHECK (head_version BETWEEN 1 AND 4294967295),
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    -- Archived workflows are left out of lists; versions and runs are kept.
    archived_at     timestamptz
);
-- Listings, newest first: overall and by owner.
CREATE INDEX workflows_newest ON workflows (created_at DESC, id DESC);
CREATE INDEX workflows_owner_newest ON workflows (owner_id, created_at DESC, id DESC);

CREATE TABLE workflow_versions (
    id          uuid        PRIMARY KEY,
    workflow_id uuid        NOT NULL REFERENCES workflows (id),
    number      bigint      NOT NULL CHECK (number BETWEEN 1 AND 4294967295),
    changelog   text        NOT NULL,
    created_by  uuid        NOT NULL,
    created_at  timestamptz NOT NULL,
    UNIQUE (workflow_id, number),
    -- The parent key of the head's composite foreign key below.
    UNIQUE (workflow_id, id)
);

-- Deferred: a workflow and its first version reference each other, so one
-- of the two rows is always inserted first. The head is one of the
-- workflow's own versions.
ALTER TABLE workflows ADD CONSTRAINT workflows_head_version_fk
    FOREIGN KEY (id, head_version_id) REFERENCES workflow_versions (workflow_id, id)
    DEFERRABLE INITIALLY DEFERRED;

CREATE TABLE workflow_nodes (
    id                   uuid             PRIMARY KEY,
    version_id           uuid             NOT NULL REFERENCES workflow_versions (id),
    ordinal              bigint           NOT NULL CHECK (ordinal BETWEEN 0 AND 4294967295),
    step_key             text             NOT NULL,
    kind                 text             NOT NULL CHECK (kind IN ('trigger', 'lens', 'tool')),
    name                 text             NOT NULL,
    node_type            text             NOT NULL,
    -- A lens step's lens and, when pinned, its version. No foreign key: a
    -- version keeps naming its lens whatever becomes of it.
    lens_id              uuid,
    lens_version_id      uuid             CHECK (lens_version_id IS NULL OR lens_id IS NOT NULL),
    parameters           text             NOT NULL CHECK (json_typeof(parameters::json) = 'object'),
    config               text             NOT NULL CHECK (json_typeof(config::json) = 'object'),
    -- The saved connection a step names (never a secret).
    connector_provider   text,
    connector_ref        text,
    connector_capability text,
    position_x           double precision NOT NULL,
    position_y           double precision NOT NULL,
    CHECK ((connector_provider IS NULL) = (connector_ref IS NULL)),
    CHECK (connector_capability IS NULL OR connector_ref IS NOT NULL),
    -- The parent key of the edges' composite foreign keys below; also how a
    -- version's nodes are found.
    UNIQUE (version_id, id)
);
CREATE INDEX workflow_nodes_in_order ON workflow_nodes (version_id, ordinal);

CREATE TABLE workflow_edges (
    id              uuid   PRIMARY KEY,
    version_id      uuid   NOT NULL REFERENCES workflow_versions (id),
    ordinal         bigint NOT NULL CHECK (ordinal BETWEEN 0 AND 4294967295),
    from_node_id    uuid   NOT NULL,
    output_key      text   NOT NULL,
    to_node_id      uuid   NOT NULL,
    input_parameter text   NOT NULL,
    condition       text   CHECK (condition IS NULL OR json_typeof(condition::json) = 'object'),
    merge_strategy  text   CHECK (merge_strategy IS NULL
                                  OR merge_strategy IN ('last_write_wins', 'concat', 'array', 'json_object')),
    FOREIGN KEY (version_id, from_node_id) REFERENCES workflow_nodes (version_id, id),
    FOREIGN KEY (version_id, to_node_id) REFERENCES workflow_nodes (version_id, id)
);
CREATE INDEX workflow_edges_in_order ON workflow_edges (version_id, ordinal);

-- A lenser's saved connections. The secret is sealed by the server
-- (XChaCha20-Poly1305 under its secret key, bound to owner and ref): these
-- bytes never hold it in clear. Refs compare and sort as bytes (collation
-- "C"), whatever the database's collation, as on SQLite.
CREATE TABLE connections (
    owner_id       uuid        NOT NULL,
    connection_ref text        COLLATE "C" NOT NULL,
    provider       text        NOT NULL,
    settings       text        NOT NULL CHECK (json_typeof(settings::json) = 'object'),
    sealed_secret  bytea       NOT NULL,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (owner_id, connection_ref)
);
