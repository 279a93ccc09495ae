-- Lens labels (lf-lens's labels): named pointers to a lens's versions, and
-- every move of one, in the order the store applied them.
--
-- Conventions as in 0001: ids are 16-byte BLOBs, times INTEGER microseconds
-- since the Unix epoch (UTC), booleans 0/1.
-- Released migrations are never edited: add a new file instead.

-- The labels as they are. `protected` is the owner's flag only: production
-- is protected whatever it says. The store checks that a label's version is
-- one of its lens's.
CREATE TABLE lens_labels (
    lens_id        BLOB    NOT NULL REFERENCES lenses (id),
    label          TEXT    NOT NULL CHECK (length(label) BETWEEN 1 AND 32),
    version_id     BLOB    NOT NULL REFERENCES lens_versions (id),
    protected      INTEGER NOT NULL CHECK (protected IN (0, 1)),
    -- Who moved it last: the lenser, and the AI Lenser acting for them.
    moved_by       BLOB    CHECK (moved_by IS NULL OR length(moved_by) = 16),
    moved_by_agent BLOB    CHECK (moved_by_agent IS NULL OR length(moved_by_agent) = 16),
    moved_at       INTEGER NOT NULL,
    PRIMARY KEY (lens_id, label)
) WITHOUT ROWID;

-- Every move: from_version_id is NULL for a new label, to_version_id for a
-- removed one. seq orders them (AUTOINCREMENT: never reused).
CREATE TABLE lens_label_moves (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    lens_id         BLOB    NOT NULL REFERENCES lenses (id),
    label           TEXT    NOT NULL CHECK (length(label) BETWEEN 1 AND 32),
    from_version_id BLOB    REFERENCES lens_versions (id),
    to_version_id   BLOB    REFERENCES lens_versions (id),
    moved_by        BLOB    CHECK (moved_by IS NULL OR length(moved_by) = 16),
    moved_by_agent  BLOB    CHECK (moved_by_agent IS NULL OR length(moved_by_agent) = 16),
    moved_at        INTEGER NOT NULL,
    CHECK (from_version_id IS NOT NULL OR to_version_id IS NOT NULL)
);
-- A lens's history, newest first, all labels or one.
CREATE INDEX lens_label_moves_lens ON lens_label_moves (lens_id, seq);
CREATE INDEX lens_label_moves_label ON lens_label_moves (lens_id, label, seq);

-- Labels are read by the cached reads (a lens by label, a lens's labels):
-- see 0016.
CREATE TRIGGER lens_labels_insert_moves_cached_reads AFTER INSERT ON lens_labels
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER lens_labels_update_moves_cached_reads AFTER UPDATE ON lens_labels
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER lens_labels_delete_moves_cached_reads AFTER DELETE ON lens_labels
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
