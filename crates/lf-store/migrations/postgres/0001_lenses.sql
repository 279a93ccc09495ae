-- Lenses, their immutable versions and parameters, tracked runs, and the
-- full-text index over them.
--
-- Conventions of the PostgreSQL schema: ids are uuid, times are timestamptz
-- (microsecond precision, like lf_core::Timestamp), semver parts are three
-- bigint columns (they are u32 in Rust, beyond integer) so versions order
-- numerically. Released migrations are never edited: add a new file instead.

CREATE TABLE lenses (
    id              uuid        PRIMARY KEY,
    owner_id        uuid        NOT NULL,
    title           text        NOT NULL,
    description     text,
    visibility      text        NOT NULL CHECK (visibility IN ('public', 'community', 'private')),
    status          text        NOT NULL CHECK (status IN ('draft', 'published', 'archived')),
    -- No foreign key: a fork keeps naming its source whatever becomes of it.
    parent_lens_id  uuid,
    head_version_id uuid        NOT NULL,
    head_major      bigint      NOT NULL CHECK (head_major BETWEEN 0 AND 4294967295),
    head_minor      bigint      NOT NULL CHECK (head_minor BETWEEN 0 AND 4294967295),
    head_patch      bigint      NOT NULL CHECK (head_patch BETWEEN 0 AND 4294967295),
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    archived_at     timestamptz,
    deleted_at      timestamptz,
    -- The head body's words at weight C, set by the store with every new
    -- head: the body lives in lens_versions, out of reach of a generated
    -- column.
    body_tsv        tsvector    NOT NULL,
    -- What search_lenses matches and ranks: title (A), description (B), head
    -- body (C), with the 'simple' configuration (lowercased words, no
    -- stemming, no stop words), so every word can be found by its prefix.
    search          tsvector    GENERATED ALWAYS AS (
                        setweight(to_tsvector('simple'::regconfig, title), 'A')
                        || setweight(to_tsvector('simple'::regconfig, coalesce(description, '')), 'B')
                        || body_tsv
                    ) STORED
)
-- Keeps rows narrow by moving the tsvectors out of line: a search visits
-- the row of every match to count it, and fat rows would make that a read of
-- the whole table.
WITH (toast_tuple_target = 512);

-- The listing orders (newest first), overall and per filter. Partial: deleted
-- lenses are never listed.
CREATE INDEX lenses_newest ON lenses (created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX lenses_owner_newest ON lenses (owner_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX lenses_visibility_newest ON lenses (visibility, created_at DESC, id DESC)
    WHERE deleted_at IS NULL;
CREATE INDEX lenses_status_newest ON lenses (status, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX lenses_search ON lenses USING gin (search) WHERE deleted_at IS NULL;

CREATE TABLE lens_versions (
    id         uuid        PRIMARY KEY,
    lens_id    uuid        NOT NULL REFERENCES lenses (id),
    major      bigint      NOT NULL CHECK (major BETWEEN 0 AND 4294967295),
    minor      bigint      NOT NULL CHECK (minor BETWEEN 0 AND 4294967295),
    patch      bigint      NOT NULL CHECK (patch BETWEEN 0 AND 4294967295),
    body       text        NOT NULL,
    changelog  text        NOT NULL,
    created_at timestamptz NOT NULL,
    UNIQUE (lens_id, major, minor, patch)
);

-- Deferred: a lens and its first version reference each other, so one of the
-- two rows is always inserted first.
ALTER TABLE lenses ADD CONSTRAINT lenses_head_version_fk
    FOREIGN KEY (head_version_id) REFERENCES lens_versions (id) DEFERRABLE INITIALLY DEFERRED;

-- A version heads at most one lens.
CREATE UNIQUE INDEX lenses_head_version ON lenses (head_version_id);

CREATE TABLE version_params (
    id            uuid    PRIMARY KEY,
    version_id    uuid    NOT NULL REFERENCES lens_versions (id),
    position      integer NOT NULL CHECK (position >= 0),
    label         text    NOT NULL,
    optional      boolean NOT NULL,
    type_hint     text,
    description   text,
    default_value text,
    -- The allowed values, empty for any.
    options       jsonb   NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(options) = 'array'),
    UNIQUE (version_id, position)
);

CREATE TABLE lens_runs (
    id          uuid        PRIMARY KEY,
    lens_id     uuid        NOT NULL REFERENCES lenses (id),
    version_id  uuid        NOT NULL REFERENCES lens_versions (id),
    -- No foreign key yet: workflows are stored by a later migration.
    workflow_id uuid        NOT NULL,
    lenser_id   uuid,
    -- The labels that received a value.
    params_used jsonb       NOT NULL CHECK (jsonb_typeof(params_used) = 'array'),
    created_at  timestamptz NOT NULL
);
CREATE INDEX lens_runs_lens ON lens_runs (lens_id, created_at DESC);
CREATE INDEX lens_runs_version ON lens_runs (version_id);
