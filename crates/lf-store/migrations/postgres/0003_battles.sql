-- Battles, their contenders, submissions, votes, verdicts, judge errors and
-- standings (lf-battle's BattleStore).
--
-- Conventions as in 0001: ids are uuid, times timestamptz. Numbers are
-- bigint (what the stores read and write). Slots are 0 (A) to 25 (Z); scores
-- are tenths, 0 to 1000. A rubric is a JSON array of [title, weight,
-- description], an automatic check a JSON object with its "kind", a
-- verdict's criteria a JSON array of tenths, all stored as text in the form
-- the SQLite schema uses. Every row of a child table names its battle, and a
-- contender it names must be one of that battle's (composite foreign keys on
-- battle_contenders (battle_id, id)). Released migrations are never edited:
-- add a new file instead.

CREATE TABLE battles (
    id                 uuid        PRIMARY KEY,
    title              text        NOT NULL,
    task_prompt        text        NOT NULL,
    battle_type        text        NOT NULL CHECK (battle_type IN ('ai_vs_ai', 'human_vs_human_ai_votes',
                                   'human_vs_human_open_votes', 'human_vs_ai', 'workflow_battle',
                                   'lenser_battle')),
    judging_mode       text        NOT NULL CHECK (judging_mode IN ('community_vote', 'ai_judge',
                                   'rubric_score', 'auto_score')),
    max_contenders     bigint      NOT NULL CHECK (max_contenders BETWEEN 2 AND 26),
    ai_judge_model_key text,
    rubric             text        CHECK (rubric IS NULL OR json_typeof(rubric::json) = 'array'),
    auto_check         text        CHECK (auto_check IS NULL OR json_typeof(auto_check::json) = 'object'),
    creator_id         uuid        NOT NULL,
    status             text        NOT NULL CHECK (status IN ('draft', 'open', 'executing', 'voting',
                                   'scoring', 'closed', 'published', 'archived')),
    -- One of this battle's contenders (foreign key below); NULL before closing.
    winner_id          uuid,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    closed_at          timestamptz
);
-- Listings, newest first: overall, by creator (list and history), by status
-- (list filters, closed_results).
CREATE INDEX battles_newest ON battles (created_at DESC, id DESC);
CREATE INDEX battles_creator_newest ON battles (creator_id, created_at DESC, id DESC);
CREATE INDEX battles_status_newest ON battles (status, created_at DESC, id DESC);

CREATE TABLE battle_contenders (
    id             uuid        PRIMARY KEY,
    battle_id      uuid        NOT NULL REFERENCES battles (id),
    slot           bigint      NOT NULL CHECK (slot BETWEEN 0 AND 25),
    display_name   text        NOT NULL,
    contender_type text        NOT NULL CHECK (contender_type IN ('human', 'ai_model', 'ai_agent', 'workflow')),
    reference_id   uuid        NOT NULL,
    owner_id       uuid,
    joined_at      timestamptz NOT NULL,
    -- A slot and a reference are taken once per battle; slots stay a prefix
    -- of A-Z (add_contender checks the count with the battle row locked).
    UNIQUE (battle_id, slot),
    UNIQUE (battle_id, reference_id),
    -- The parent key of the composite foreign keys below.
    UNIQUE (battle_id, id)
);
-- battle_history: battles a lenser took part in.
CREATE INDEX battle_contenders_reference ON battle_contenders (reference_id);

ALTER TABLE battles ADD FOREIGN KEY (id, winner_id) REFERENCES battle_contenders (battle_id, id);

CREATE TABLE battle_submissions (
    id           uuid        PRIMARY KEY,
    battle_id    uuid        NOT NULL,
    contender_id uuid        NOT NULL,
    text         text        NOT NULL,
    submitted_by uuid,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    -- One submission per contender; a resubmission replaces it.
    UNIQUE (battle_id, contender_id),
    FOREIGN KEY (battle_id, contender_id) REFERENCES battle_contenders (battle_id, id)
);

CREATE TABLE battle_votes (
    id                uuid        PRIMARY KEY,
    battle_id         uuid        NOT NULL REFERENCES battles (id),
    voter_id          uuid        NOT NULL,
    -- NULL: a tie.
    pick_contender_id uuid,
    rationale         text,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    -- One vote per voter per battle; a second one replaces it.
    UNIQUE (battle_id, voter_id),
    FOREIGN KEY (battle_id, pick_contender_id) REFERENCES battle_contenders (battle_id, id)
);

CREATE TABLE battle_verdicts (
    battle_id           uuid        NOT NULL,
    contender_id        uuid        NOT NULL,
    verdict             text        NOT NULL CHECK (verdict IN ('winner', 'tie', 'loser')),
    score               bigint      NOT NULL CHECK (score BETWEEN 0 AND 1000),
    criteria            text        NOT NULL CHECK (json_typeof(criteria::json) = 'array'),
    reasoning           text        NOT NULL,
    model               text        NOT NULL,
    -- NULL for automatic checks.
    position_consistent boolean,
    created_at          timestamptz NOT NULL,
    PRIMARY KEY (battle_id, contender_id),
    FOREIGN KEY (battle_id, contender_id) REFERENCES battle_contenders (battle_id, id)
);

CREATE TABLE battle_judge_errors (
    -- Insertion order, after `at`.
    seq       bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    battle_id uuid        NOT NULL REFERENCES battles (id),
    model     text        NOT NULL,
    message   text        NOT NULL,
    at        timestamptz NOT NULL
);
CREATE INDEX battle_judge_errors_battle ON battle_judge_errors (battle_id, at, seq);

CREATE TABLE battle_standings (
    battle_id    uuid   NOT NULL,
    contender_id uuid   NOT NULL,
    position     bigint NOT NULL CHECK (position BETWEEN 1 AND 26),
    rank         bigint NOT NULL CHECK (rank BETWEEN 1 AND 26),
    score        bigint CHECK (score IS NULL OR score BETWEEN 0 AND 1000),
    votes        bigint NOT NULL CHECK (votes >= 0),
    PRIMARY KEY (battle_id, contender_id),
    UNIQUE (battle_id, position),
    FOREIGN KEY (battle_id, contender_id) REFERENCES battle_contenders (battle_id, id)
);
