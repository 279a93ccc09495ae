-- Lenses, their immutable versions and parameters, tracked runs, and the
-- full-text index over them.
--
-- Conventions of the SQLite schema: ids are UUIDs as 16-byte BLOBs, times are
-- INTEGER microseconds since the Unix epoch (UTC), booleans are 0/1, semver
-- parts are three INTEGER columns so versions order numerically.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE lenses (
    -- Aliases the rowid, which keys this lens's row in lens_fts. Declared so
    -- that VACUUM can never renumber it.
    seq             INTEGER PRIMARY KEY,
    id              BLOB    NOT NULL UNIQUE CHECK (length(id) = 16),
    owner_id        BLOB    NOT NULL CHECK (length(owner_id) = 16),
    title           TEXT    NOT NULL,
    description     TEXT,
    visibility      TEXT    NOT NULL CHECK (visibility IN ('public', 'community', 'private')),
    status          TEXT    NOT NULL CHECK (status IN ('draft', 'published', 'archived')),
    -- No foreign key: a fork keeps naming its source whatever becomes of it.
    parent_lens_id  BLOB    CHECK (parent_lens_id IS NULL OR length(parent_lens_id) = 16),
    -- Deferred: a lens and its first version reference each other, so one of
    -- the two rows is always inserted first.
    head_version_id BLOB    NOT NULL REFERENCES lens_versions (id) DEFERRABLE INITIALLY DEFERRED,
    head_major      INTEGER NOT NULL CHECK (head_major BETWEEN 0 AND 4294967295),
    head_minor      INTEGER NOT NULL CHECK (head_minor BETWEEN 0 AND 4294967295),
    head_patch      INTEGER NOT NULL CHECK (head_patch BETWEEN 0 AND 4294967295),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    archived_at     INTEGER,
    deleted_at      INTEGER
);

-- The listing orders (newest first), overall and per filter. Partial: deleted
-- lenses are never listed. The first one also covers the columns every
-- listing filters on, so counting a listing never touches the table.
-- A version heads at most one lens. Also what SQLite searches when a version
-- is inserted, to settle the deferred foreign key above: without it every
-- insert would scan all lenses.
CREATE UNIQUE INDEX lenses_head_version ON lenses (head_version_id);

CREATE INDEX lenses_newest ON lenses (created_at DESC, id DESC, status, visibility, owner_id)
    WHERE deleted_at IS NULL;
CREATE INDEX lenses_owner_newest ON lenses (owner_id, created_at DESC, id DESC)
    WHERE deleted_at IS NULL;
CREATE INDEX lenses_visibility_newest ON lenses (visibility, created_at DESC, id DESC)
    WHERE deleted_at IS NULL;
CREATE INDEX lenses_status_newest ON lenses (status, created_at DESC, id DESC)
    WHERE deleted_at IS NULL;

CREATE TABLE lens_versions (
    id         BLOB    PRIMARY KEY CHECK (length(id) = 16),
    lens_id    BLOB    NOT NULL REFERENCES lenses (id),
    major      INTEGER NOT NULL CHECK (major BETWEEN 0 AND 4294967295),
    minor      INTEGER NOT NULL CHECK (minor BETWEEN 0 AND 4294967295),
    patch      INTEGER NOT NULL CHECK (patch BETWEEN 0 AND 4294967295),
    body       TEXT    NOT NULL,
    changelog  TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (lens_id, major, minor, patch)
);

-- Clustered by version so that one version's parameters are read together,
-- in body order.
CREATE TABLE version_params (
    version_id    BLOB    NOT NULL REFERENCES lens_versions (id),
    position      INTEGER NOT NULL CHECK (position >= 0),
    id            BLOB    NOT NULL UNIQUE CHECK (length(id) = 16),
    label         TEXT    NOT NULL,
    optional      INTEGER NOT NULL CHECK (optional IN (0, 1)),
    type_hint     TEXT,
    description   TEXT,
    default_value TEXT,
    -- A JSON array of strings: the allowed values, empty for any.
    options       TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(options)),
    PRIMARY KEY (version_id, position)
) WITHOUT ROWID;

CREATE TABLE lens_runs (
    id          BLOB    PRIMARY KEY CHECK (length(id) = 16),
    lens_id     BLOB    NOT NULL REFERENCES lenses (id),
    version_id  BLOB    NOT NULL REFERENCES lens_versions (id),
    -- No foreign key yet: workflows are stored by a later migration.
    workflow_id BLOB    NOT NULL CHECK (length(workflow_id) = 16),
    lenser_id   BLOB    CHECK (lenser_id IS NULL OR length(lenser_id) = 16),
    -- A JSON array of the labels that received a value.
    params_used TEXT    NOT NULL CHECK (json_valid(params_used)),
    created_at  INTEGER NOT NULL
);
CREATE INDEX lens_runs_lens ON lens_runs (lens_id, created_at DESC);
CREATE INDEX lens_runs_version ON lens_runs (version_id);

-- What search_lenses matches and ranks: title, description and head body of
-- every lens that is neither deleted nor archived, keyed by lenses.seq and
-- written by the store in the transaction that changes the lens.
--
-- `scope` holds a lens's reach as two tokens, "v<visibility>" and
-- "o<owner id as 32 hex digits>", so that the visibility predicate and the
-- count of matches are answered by the index alone: counting a broad match
-- never visits the lenses table. The rows a search returns are still
-- checked against lenses itself.
--
-- Contentless: the text lives in lenses and lens_versions only;
-- contentless_delete lets a row be replaced when its lens changes.
-- remove_diacritics 2 makes "cafe" find "café". The prefix indexes answer
-- prefix terms of up to 4 characters ("c"*, "rev"*) from one list instead of
-- merging the lists of every word that starts with them, which for short
-- prefixes means thousands.
CREATE VIRTUAL TABLE lens_fts USING fts5 (
    title,
    description,
    body,
    scope,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '1 2 3 4'
);
