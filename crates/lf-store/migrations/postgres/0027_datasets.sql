-- Datasets (lf-eval's DatasetStore): named, owned, versioned lists of
-- cases. A case is a row keyed by its dataset and position and records the
-- version that added it; version n is the first case_count positions, so
-- adding cases writes only the new rows and a version row. A name is unique
-- among an owner's datasets that are not archived; names sort as bytes
-- ("C"). inputs, expected, assertions, tags and metadata are JSON stored as
-- text, as on SQLite.
-- Released migrations are never edited: add a new file instead.
CREATE TABLE datasets (
    id          uuid        PRIMARY KEY,
    owner_id    uuid        NOT NULL,
    name        text        COLLATE "C" NOT NULL,
    description text        NOT NULL,
    visibility  text        NOT NULL CHECK (visibility IN ('private', 'community', 'public')),
    version     bigint      NOT NULL CHECK (version >= 1),
    case_count  bigint      NOT NULL CHECK (case_count >= 0),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    archived_at timestamptz
);
CREATE UNIQUE INDEX datasets_live_name ON datasets (owner_id, name) WHERE archived_at IS NULL;
CREATE INDEX datasets_listed ON datasets (name, id);

CREATE TABLE dataset_versions (
    dataset_id  uuid        NOT NULL REFERENCES datasets (id),
    version     bigint      NOT NULL CHECK (version >= 1),
    case_count  bigint      NOT NULL CHECK (case_count >= 0),
    created_at  timestamptz NOT NULL,
    created_by  uuid        NOT NULL,
    agent_id    uuid,
    PRIMARY KEY (dataset_id, version)
);

CREATE TABLE dataset_cases (
    dataset_id  uuid        NOT NULL REFERENCES datasets (id),
    position    bigint      NOT NULL CHECK (position >= 1),
    added_in    bigint      NOT NULL CHECK (added_in >= 1),
    prompt      text,
    inputs      text        CHECK (inputs IS NULL OR json_typeof(inputs::json) = 'object'),
    expected    text        CHECK (expected IS NULL OR json_typeof(expected::json) IS NOT NULL),
    assertions  text        NOT NULL CHECK (json_typeof(assertions::json) = 'array'),
    tags        text        NOT NULL CHECK (json_typeof(tags::json) = 'array'),
    metadata    text        NOT NULL CHECK (json_typeof(metadata::json) = 'object'),
    CHECK ((prompt IS NULL) <> (inputs IS NULL)),
    PRIMARY KEY (dataset_id, position)
);
