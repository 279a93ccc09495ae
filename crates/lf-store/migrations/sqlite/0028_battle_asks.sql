-- Asking ai_model contenders' models (lf-battle's AskStore): one row per
-- (battle, contender) asked, counting the attempts made (each counted
-- before it is made) and holding the lease of whoever may make the next.
-- Released migrations are never edited: add a new file instead.
CREATE TABLE battle_asks (
    battle_id    BLOB    NOT NULL CHECK (length(battle_id) = 16),
    contender_id BLOB    NOT NULL CHECK (length(contender_id) = 16),
    attempts     INTEGER NOT NULL CHECK (attempts >= 0),
    holder       TEXT    NOT NULL,
    lease_until  INTEGER NOT NULL,
    PRIMARY KEY (battle_id, contender_id)
);
