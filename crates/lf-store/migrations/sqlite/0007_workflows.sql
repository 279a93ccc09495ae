-- Workflows, their immutable versions with nodes and edges (lf-workflow's
-- WorkflowStore), and saved connections with their sealed secrets
-- (lf-workflow's ConnectionStore).
--
-- Conventions as in 0001: ids are UUIDs as 16-byte BLOBs, times INTEGER
-- microseconds since the Unix epoch (UTC). A node's parameters and config
-- and an edge's condition are JSON objects stored as text, so they read back
-- with their key order; a pick (output_key) is its text. Every node and
-- edge names its version, and an edge's ends must be nodes of that version
-- (composite foreign keys on workflow_nodes (version_id, id)).
-- Released migrations are never edited: add a new file instead.

CREATE TABLE workflows (
    id              BLOB    PRIMARY KEY CHECK (length(id) = 16),
    owner_id        BLOB    NOT NULL CHECK (length(owner_id) = 16),
    title           TEXT    NOT NULL,
    description     TEXT,
    visibility      TEXT    NOT NULL CHECK (visibility IN ('public', 'unlisted', 'private')),
    -- Deferred: a workflow and its first version reference each other, so
    -- one of the two rows is always inserted first. The head is one of the
    -- workflow's own versions.
    head_version_id BLOB    NOT NULL,
    head_version    INTEGER NOT NULL CHECK (head_version BETWEEN 1 AND 4294967295),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    -- Archived workflows are left out of lists; versions and runs are kept.
    archived_at     INTEGER,
    FOREIGN KEY (id, head_version_id) REFERENCES workflow_versions (workflow_id, id)
        DEFERRABLE INITIALLY DEFERRED
);
-- Listings, newest first: overall and by owner.
CREATE INDEX workflows_newest ON workflows (created_at DESC, id DESC);
CREATE INDEX workflows_owner_newest ON workflows (owner_id, created_at DESC, id DESC);

CREATE TABLE workflow_versions (
    id          BLOB    PRIMARY KEY CHECK (length(id) = 16),
    workflow_id BLOB    NOT NULL REFERENCES workflows (id),
    number      INTEGER NOT NULL CHECK (number BETWEEN 1 AND 4294967295),
    changelog   TEXT    NOT NULL,
    created_by  BLOB    NOT NULL CHECK (length(created_by) = 16),
    created_at  INTEGER NOT NULL,
    UNIQUE (workflow_id, number),
    -- The parent key of the head's composite foreign key above.
    UNIQUE (workflow_id, id)
);

CREATE TABLE workflow_nodes (
    id                   BLOB    PRIMARY KEY CHECK (length(id) = 16),
    version_id           BLOB    NOT NULL REFERENCES workflow_versions (id),
    ordinal              INTEGER NOT NULL CHECK (ordinal BETWEEN 0 AND 4294967295),
    step_key             TEXT    NOT NULL,
    kind                 TEXT    NOT NULL CHECK (kind IN ('trigger', 'lens', 'tool')),
    name                 TEXT    NOT NULL,
    node_type            TEXT    NOT NULL,
    -- A lens step's lens and, when pinned, its version. No foreign key: a
    -- version keeps naming its lens whatever becomes of it.
    lens_id              BLOB    CHECK (lens_id IS NULL OR length(lens_id) = 16),
    lens_version_id      BLOB    CHECK (lens_version_id IS NULL OR (lens_id IS NOT NULL
                                        AND length(lens_version_id) = 16)),
    parameters           TEXT    NOT NULL CHECK (json_valid(parameters) AND json_type(parameters) = 'object'),
    config               TEXT    NOT NULL CHECK (json_valid(config) AND json_type(config) = 'object'),
    -- The saved connection a step names (never a secret).
    connector_provider   TEXT,
    connector_ref        TEXT,
    connector_capability TEXT,
    position_x           REAL    NOT NULL,
    position_y           REAL    NOT NULL,
    CHECK ((connector_provider IS NULL) = (connector_ref IS NULL)),
    CHECK (connector_capability IS NULL OR connector_ref IS NOT NULL),
    -- The parent key of the edges' composite foreign keys below; also how a
    -- version's nodes are found.
    UNIQUE (version_id, id)
);
CREATE INDEX workflow_nodes_in_order ON workflow_nodes (version_id, ordinal);

CREATE TABLE workflow_edges (
    id              BLOB    PRIMARY KEY CHECK (length(id) = 16),
    version_id      BLOB    NOT NULL REFERENCES workflow_versions (id),
    ordinal         INTEGER NOT NULL CHECK (ordinal BETWEEN 0 AND 4294967295),
    from_node_id    BLOB    NOT NULL,
    output_key      TEXT    NOT NULL,
    to_node_id      BLOB    NOT NULL,
    input_parameter TEXT    NOT NULL,
    condition       TEXT    CHECK (condition IS NULL OR (json_valid(condition) AND json_type(condition) = 'object')),
    merge_strategy  TEXT    CHECK (merge_strategy IS NULL
                                   OR merge_strategy IN ('last_write_wins', 'concat', 'array', 'json_object')),
    FOREIGN KEY (version_id, from_node_id) REFERENCES workflow_nodes (version_id, id),
    FOREIGN KEY (version_id, to_node_id) REFERENCES workflow_nodes (version_id, id)
);
CREATE INDEX workflow_edges_in_order ON workflow_edges (version_id, ordinal);

-- A lenser's saved connections. The secret is sealed by the server
-- (XChaCha20-Poly1305 under its secret key, bound to owner and ref): these
-- bytes never hold it in clear. Refs compare and sort as bytes (BINARY).
CREATE TABLE connections (
    owner_id       BLOB    NOT NULL CHECK (length(owner_id) = 16),
    connection_ref TEXT    NOT NULL,
    provider       TEXT    NOT NULL,
    settings       TEXT    NOT NULL CHECK (json_valid(settings) AND json_type(settings) = 'object'),
    sealed_secret  BLOB    NOT NULL,
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (owner_id, connection_ref)
) WITHOUT ROWID;
