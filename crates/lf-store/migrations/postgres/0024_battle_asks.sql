-- Asking ai_model contenders' models (lf-battle's AskStore): one row per
-- (battle, contender) asked, counting the attempts made (each counted
-- before it is made) and holding the lease of whoever may make the next.
-- Released migrations are never edited: add a new file instead.
CREATE TABLE battle_asks (
    battle_id    uuid        NOT NULL,
    contender_id uuid        NOT NULL,
    attempts     bigint      NOT NULL CHECK (attempts >= 0),
    holder       text        NOT NULL,
    lease_until  timestamptz NOT NULL,
    PRIMARY KEY (battle_id, contender_id)
);
