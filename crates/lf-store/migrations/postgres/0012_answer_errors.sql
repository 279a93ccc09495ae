-- Workflow contenders whose run gave no answer (lf-battle's answers
-- module, AnswerError): the run failed or was cancelled, would not start,
-- or its answer could not be submitted. Shown by get_battle.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE battle_answer_errors (
    -- Insertion order, after `at`.
    seq          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    battle_id    uuid        NOT NULL REFERENCES battles (id),
    contender_id uuid        NOT NULL,
    run_id       text,
    message      text        NOT NULL,
    at           timestamptz NOT NULL,
    FOREIGN KEY (battle_id, contender_id) REFERENCES battle_contenders (battle_id, id)
);
CREATE INDEX battle_answer_errors_battle ON battle_answer_errors (battle_id, at, seq);
