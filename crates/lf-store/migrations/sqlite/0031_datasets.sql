-- Datasets (lf-eval's DatasetStore): named, owned, versioned lists of
-- cases. A case is a row keyed by its dataset and position and records the
-- version that added it; version n is the first case_count positions, so
-- adding cases writes only the new rows and a version row. A name is unique
-- among an owner's datasets that are not archived. inputs, expected,
-- assertions, tags and metadata are JSON as lf-eval writes it.
-- Released migrations are never edited: add a new file instead.
CREATE TABLE datasets (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    owner_id    BLOB    NOT NULL CHECK (length(owner_id) = 16),
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL,
    visibility  TEXT    NOT NULL CHECK (visibility IN ('private', 'community', 'public')),
    version     INTEGER NOT NULL CHECK (version >= 1),
    case_count  INTEGER NOT NULL CHECK (case_count >= 0),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    archived_at INTEGER
);
CREATE UNIQUE INDEX datasets_live_name ON datasets (owner_id, name) WHERE archived_at IS NULL;
CREATE INDEX datasets_listed ON datasets (name, id);

CREATE TABLE dataset_versions (
    dataset_id  BLOB    NOT NULL REFERENCES datasets (id),
    version     INTEGER NOT NULL CHECK (version >= 1),
    case_count  INTEGER NOT NULL CHECK (case_count >= 0),
    created_at  INTEGER NOT NULL,
    created_by  BLOB    NOT NULL CHECK (length(created_by) = 16),
    agent_id    BLOB    CHECK (agent_id IS NULL OR length(agent_id) = 16),
    PRIMARY KEY (dataset_id, version)
) WITHOUT ROWID;

CREATE TABLE dataset_cases (
    dataset_id  BLOB    NOT NULL REFERENCES datasets (id),
    position    INTEGER NOT NULL CHECK (position >= 1),
    added_in    INTEGER NOT NULL CHECK (added_in >= 1),
    prompt      TEXT,
    inputs      TEXT    CHECK (inputs IS NULL OR (json_valid(inputs) AND json_type(inputs) = 'object')),
    expected    TEXT    CHECK (expected IS NULL OR json_valid(expected)),
    assertions  TEXT    NOT NULL CHECK (json_valid(assertions) AND json_type(assertions) = 'array'),
    tags        TEXT    NOT NULL CHECK (json_valid(tags) AND json_type(tags) = 'array'),
    metadata    TEXT    NOT NULL CHECK (json_valid(metadata) AND json_type(metadata) = 'object'),
    CHECK ((prompt IS NULL) <> (inputs IS NULL)),
    PRIMARY KEY (dataset_id, position)
) WITHOUT ROWID;
