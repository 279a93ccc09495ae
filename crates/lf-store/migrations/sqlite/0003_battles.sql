-- Battles, their contenders, submissions, votes, verdicts, judge errors and
-- standings (lf-battle's BattleStore).
--
-- Conventions as in 0001: ids are UUIDs as 16-byte BLOBs, times INTEGER
-- microseconds since the Unix epoch (UTC), booleans 0/1. Slots are 0 (A) to
-- 25 (Z); scores are tenths, 0 to 1000. A rubric is a JSON array of
-- [title, weight, description], an automatic check a JSON object with its
-- "kind", a verdict's criteria a JSON array of tenths. Every row of a child
-- table names its battle, and a contender it names must be one of that
-- battle's (composite foreign keys on battle_contenders (battle_id, id)).
-- Released migrations are never edited: add a new file instead.

CREATE TABLE battles (
    id                 BLOB    PRIMARY KEY CHECK (length(id) = 16),
    title              TEXT    NOT NULL,
    task_prompt        TEXT    NOT NULL,
    battle_type        TEXT    NOT NULL CHECK (battle_type IN ('ai_vs_ai', 'human_vs_human_ai_votes',
                               'human_vs_human_open_votes', 'human_vs_ai', 'workflow_battle', 'lenser_battle')),
    judging_mode       TEXT    NOT NULL CHECK (judging_mode IN ('community_vote', 'ai_judge', 'rubric_score',
                               'auto_score')),
    max_contenders     INTEGER NOT NULL CHECK (max_contenders BETWEEN 2 AND 26),
    ai_judge_model_key TEXT,
    rubric             TEXT    CHECK (rubric IS NULL OR (json_valid(rubric) AND json_type(rubric) = 'array')),
    auto_check         TEXT    CHECK (auto_check IS NULL
                                      OR (json_valid(auto_check) AND json_type(auto_check) = 'object')),
    creator_id         BLOB    NOT NULL CHECK (length(creator_id) = 16),
    status             TEXT    NOT NULL CHECK (status IN ('draft', 'open', 'executing', 'voting', 'scoring',
                               'closed', 'published', 'archived')),
    -- One of this battle's contenders; NULL before closing (or without one).
    winner_id          BLOB,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    closed_at          INTEGER,
    FOREIGN KEY (id, winner_id) REFERENCES battle_contenders (battle_id, id)
);
-- Listings, newest first: overall, by creator (list and history), by status
-- (list filters, closed_results).
CREATE INDEX battles_newest ON battles (created_at DESC, id DESC);
CREATE INDEX battles_creator_newest ON battles (creator_id, created_at DESC, id DESC);
CREATE INDEX battles_status_newest ON battles (status, created_at DESC, id DESC);

CREATE TABLE battle_contenders (
    id             BLOB    PRIMARY KEY CHECK (length(id) = 16),
    battle_id      BLOB    NOT NULL REFERENCES battles (id),
    slot           INTEGER NOT NULL CHECK (slot BETWEEN 0 AND 25),
    display_name   TEXT    NOT NULL,
    contender_type TEXT    NOT NULL CHECK (contender_type IN ('human', 'ai_model', 'ai_agent', 'workflow')),
    reference_id   BLOB    NOT NULL CHECK (length(reference_id) = 16),
    owner_id       BLOB    CHECK (owner_id IS NULL OR length(owner_id) = 16),
    joined_at      INTEGER NOT NULL,
    -- A slot and a reference are taken once per battle; slots stay a prefix
    -- of A-Z (add_contender checks the count under the write lock).
    UNIQUE (battle_id, slot),
    UNIQUE (battle_id, reference_id),
    -- The parent key of the composite foreign keys below.
    UNIQUE (battle_id, id)
);
-- battle_history: battles a lenser took part in.
CREATE INDEX battle_contenders_reference ON battle_contenders (reference_id);

CREATE TABLE battle_submissions (
    id           BLOB    PRIMARY KEY CHECK (length(id) = 16),
    battle_id    BLOB    NOT NULL,
    contender_id BLOB    NOT NULL,
    text         TEXT    NOT NULL,
    submitted_by BLOB    CHECK (submitted_by IS NULL OR length(submitted_by) = 16),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    -- One submission per contender; a resubmission replaces it.
    UNIQUE (battle_id, contender_id),
    FOREIGN KEY (battle_id, contender_id) REFERENCES battle_contenders (battle_id, id)
);

CREATE TABLE battle_votes (
    id                BLOB    PRIMARY KEY CHECK (length(id) = 16),
    battle_id         BLOB    NOT NULL REFERENCES battles (id),
    voter_id          BLOB    NOT NULL CHECK (length(voter_id) = 16),
    -- NULL: a tie.
    pick_contender_id BLOB,
    rationale         TEXT,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    -- One vote per voter per battle; a second one replaces it.
    UNIQUE (battle_id, voter_id),
    FOREIGN KEY (battle_id, pick_contender_id) REFERENCES battle_contenders (battle_id, id)
);

CREATE TABLE battle_verdicts (
    battle_id           BLOB    NOT NULL,
    contender_id        BLOB    NOT NULL,
    verdict             TEXT    NOT NULL CHECK (verdict IN ('winner', 'tie', 'loser')),
    score               INTEGER NOT NULL CHECK (score BETWEEN 0 AND 1000),
    criteria            TEXT    NOT NULL CHECK (json_valid(criteria) AND json_type(criteria) = 'array'),
    reasoning           TEXT    NOT NULL,
    model               TEXT    NOT NULL,
    -- NULL for automatic checks.
    position_consistent INTEGER CHECK (position_consistent IN (0, 1)),
    created_at          INTEGER NOT NULL,
    PRIMARY KEY (battle_id, contender_id),
    FOREIGN KEY (battle_id, contender_id) REFERENCES battle_contenders (battle_id, id)
) WITHOUT ROWID;

CREATE TABLE battle_judge_errors (
    -- Insertion order, after `at`.
    seq       INTEGER PRIMARY KEY,
    battle_id BLOB    NOT NULL REFERENCES battles (id),
    model     TEXT    NOT NULL,
    message   TEXT    NOT NULL,
    at        INTEGER NOT NULL
);
CREATE INDEX battle_judge_errors_battle ON battle_judge_errors (battle_id, at, seq);

CREATE TABLE battle_standings (
    battle_id    BLOB    NOT NULL,
    contender_id BLOB    NOT NULL,
    position     INTEGER NOT NULL CHECK (position BETWEEN 1 AND 26),
    rank         INTEGER NOT NULL CHECK (rank BETWEEN 1 AND 26),
    score        INTEGER CHECK (score IS NULL OR score BETWEEN 0 AND 1000),
    votes        INTEGER NOT NULL CHECK (votes >= 0),
    PRIMARY KEY (battle_id, contender_id),
    UNIQUE (battle_id, position),
    FOREIGN KEY (battle_id, contender_id) REFERENCES battle_contenders (battle_id, id)
) WITHOUT ROWID;
