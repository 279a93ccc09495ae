-- What models' answers in a battle cost (lf-battle's AnswerCostRecord):
-- one row per contender whose submission a model made (an ai_model
-- contender asked, an agent answering), and one for the AI judge's
-- verdicts (contender_id NULL), each replaced when recorded again. `at` is
-- the submission's updated_at (a later submission not made by a model
-- leaves the row behind) or when the verdicts were made. Shown by
-- get_battle and get_battle_score; averaged by get_leaderboard.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE battle_answer_costs (
    seq              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    battle_id        uuid        NOT NULL REFERENCES battles (id),
    contender_id     uuid,
    profile_id       uuid,
    -- An operator endpoint's name, or connection:<ref>.
    endpoint         text        NOT NULL,
    -- The model as the endpoint reported it.
    model            text        NOT NULL,
    first_byte_ms    bigint      CHECK (first_byte_ms IS NULL OR first_byte_ms >= 0),
    total_ms         bigint      NOT NULL CHECK (total_ms >= 0),
    input_tokens     bigint      NOT NULL CHECK (input_tokens >= 0),
    output_tokens    bigint      NOT NULL CHECK (output_tokens >= 0),
    tokens_estimated boolean     NOT NULL,
    cost_usd         double precision NOT NULL CHECK (cost_usd >= 0),
    finish_reason    text,
    at               timestamptz NOT NULL,
    FOREIGN KEY (battle_id, contender_id) REFERENCES battle_contenders (battle_id, id)
);
-- One row per contender and one for the judge.
CREATE UNIQUE INDEX battle_answer_costs_one
    ON battle_answer_costs (battle_id, coalesce(contender_id, '00000000-0000-0000-0000-000000000000'::uuid));
-- The leaderboard's means join each row to its contender.
CREATE INDEX battle_answer_costs_contender ON battle_answer_costs (contender_id) WHERE contender_id IS NOT NULL;
