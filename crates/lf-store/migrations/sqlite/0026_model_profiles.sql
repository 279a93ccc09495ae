-- Model profiles (lf-workflow's ModelProfileStore): what to ask and where.
-- endpoint is an operator endpoint's name or connection:<ref> (a saved
-- connection of the owner's; its secret stays in connections). parameters
-- is a JSON object as lf-workflow writes it. A name is unique among an
-- owner's profiles that are not archived.
-- Released migrations are never edited: add a new file instead.
CREATE TABLE model_profiles (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    owner_id    BLOB    NOT NULL CHECK (length(owner_id) = 16),
    name        TEXT    NOT NULL,
    endpoint    TEXT    NOT NULL,
    model       TEXT    NOT NULL,
    parameters  TEXT    NOT NULL CHECK (json_valid(parameters) AND json_type(parameters) = 'object'),
    price_per_million_input  REAL NOT NULL CHECK (price_per_million_input >= 0),
    price_per_million_output REAL NOT NULL CHECK (price_per_million_output >= 0),
    visibility  TEXT    NOT NULL CHECK (visibility IN ('private', 'public')),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    archived_at INTEGER
);
CREATE UNIQUE INDEX model_profiles_live_name ON model_profiles (owner_id, name) WHERE archived_at IS NULL;
CREATE INDEX model_profiles_listed ON model_profiles (name, id) WHERE archived_at IS NULL;
