-- Workflow contenders whose run gave no answer (lf-battle's answers
-- module, AnswerError): the run failed or was cancelled, would not start,
-- or its answer could not be submitted. Shown by get_battle.
-- Released migrations are never edited: add a new file instead.

CREATE TABLE battle_answer_errors (
    -- Insertion order, after `at`.
    seq          INTEGER PRIMARY KEY,
    battle_id    BLOB    NOT NULL REFERENCES battles (id),
    contender_id BLOB    NOT NULL,
    run_id       TEXT,
    message      TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    FOREIGN KEY (battle_id, contender_id) REFERENCES battle_contenders (battle_id, id)
);
CREATE INDEX battle_answer_errors_battle ON battle_answer_errors (battle_id, at, seq);
