-- What models' answers in a battle cost (lf-battle's AnswerCostRecord):
-- one row per contender whose submission a model made (an ai_model
-- contender asked, an agent answering), and one for the AI judge's
-- verdicts (contender_id NULL), each replaced when recorded again. `at` is
-- the submission's updated_at (a later submission not made by a model
-- leaves the row behind) or when the verdicts were made. Shown by
-- get_battle and get_battle_score; averaged by get_leaderboard.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE battle_answer_costs (
    seq              INTEGER PRIMARY KEY,
    battle_id        BLOB    NOT NULL REFERENCES battles (id),
    contender_id     BLOB    CHECK (contender_id IS NULL OR length(contender_id) = 16),
    profile_id       BLOB    CHECK (profile_id IS NULL OR length(profile_id) = 16),
    -- An operator endpoint's name, or connection:<ref>.
    endpoint         TEXT    NOT NULL,
    -- The model as the endpoint reported it.
    model            TEXT    NOT NULL,
    first_byte_ms    INTEGER CHECK (first_byte_ms IS NULL OR first_byte_ms >= 0),
    total_ms         INTEGER NOT NULL CHECK (total_ms >= 0),
    input_tokens     INTEGER NOT NULL CHECK (input_tokens >= 0),
    output_tokens    INTEGER NOT NULL CHECK (output_tokens >= 0),
    tokens_estimated INTEGER NOT NULL CHECK (tokens_estimated IN (0, 1)),
    cost_usd         REAL    NOT NULL CHECK (cost_usd >= 0),
    finish_reason    TEXT,
    at               INTEGER NOT NULL,
    FOREIGN KEY (battle_id, contender_id) REFERENCES battle_contenders (battle_id, id)
);
-- One row per contender and one for the judge.
CREATE UNIQUE INDEX battle_answer_costs_one ON battle_answer_costs (battle_id, coalesce(contender_id, x''));
-- The leaderboard's means join each row to its contender.
CREATE INDEX battle_answer_costs_contender ON battle_answer_costs (contender_id) WHERE contender_id IS NOT NULL;
