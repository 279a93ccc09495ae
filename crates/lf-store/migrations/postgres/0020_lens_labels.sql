-- Lens labels (lf-lens's labels): named pointers to a lens's versions, and
-- every move of one, in the order the store applied them.
--
-- Conventions as in 0001: ids uuid, times timestamptz.
-- Released migrations are never edited: add a new file instead.

-- The labels as they are. `protected` is the owner's flag only: production
-- is protected whatever it says. The store checks that a label's version is
-- one of its lens's.
CREATE TABLE lens_labels (
    lens_id        uuid        NOT NULL REFERENCES lenses (id),
    label          text        NOT NULL CHECK (char_length(label) BETWEEN 1 AND 32),
    version_id     uuid        NOT NULL REFERENCES lens_versions (id),
    protected      boolean     NOT NULL,
    -- Who moved it last: the lenser, and the AI Lenser acting for them.
    moved_by       uuid,
    moved_by_agent uuid,
    moved_at       timestamptz NOT NULL,
    PRIMARY KEY (lens_id, label)
);

-- Every move: from_version_id is NULL for a new label, to_version_id for a
-- removed one. seq orders them: moves of one lens are made under its row's
-- lock, so their seqs follow the order they took effect.
CREATE TABLE lens_label_moves (
    seq             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    lens_id         uuid        NOT NULL REFERENCES lenses (id),
    label           text        NOT NULL CHECK (char_length(label) BETWEEN 1 AND 32),
    from_version_id uuid        REFERENCES lens_versions (id),
    to_version_id   uuid        REFERENCES lens_versions (id),
    moved_by        uuid,
    moved_by_agent  uuid,
    moved_at        timestamptz NOT NULL,
    CHECK (from_version_id IS NOT NULL OR to_version_id IS NOT NULL)
);
-- A lens's history, newest first, all labels or one.
CREATE INDEX lens_label_moves_lens ON lens_label_moves (lens_id, seq);
CREATE INDEX lens_label_moves_label ON lens_label_moves (lens_id, label, seq);
