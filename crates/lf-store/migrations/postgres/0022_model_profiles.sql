-- Model profiles (lf-workflow's ModelProfileStore): what to ask and where.
-- endpoint is an operator endpoint's name or connection:<ref> (a saved
-- connection of the owner's; its secret stays in connections). parameters
-- is a JSON object stored as text, as on SQLite. A name is unique among an
-- owner's profiles that are not archived; names sort as bytes ("C").
-- Released migrations are never edited: add a new file instead.
CREATE TABLE model_profiles (
    id          uuid        PRIMARY KEY,
    owner_id    uuid        NOT NULL,
    name        text        COLLATE "C" NOT NULL,
    endpoint    text        NOT NULL,
    model       text        NOT NULL,
    parameters  text        NOT NULL CHECK (json_typeof(parameters::json) = 'object'),
    price_per_million_input  double precision NOT NULL CHECK (price_per_million_input >= 0),
    price_per_million_output double precision NOT NULL CHECK (price_per_million_output >= 0),
    visibility  text        NOT NULL CHECK (visibility IN ('private', 'public')),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    archived_at timestamptz
);
CREATE UNIQUE INDEX model_profiles_live_name ON model_profiles (owner_id, name) WHERE archived_at IS NULL;
CREATE INDEX model_profiles_listed ON model_profiles (name, id) WHERE archived_at IS NULL;
