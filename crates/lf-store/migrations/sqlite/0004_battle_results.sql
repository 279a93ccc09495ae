-- What get_leaderboard reads: one row per closed or published battle, with
-- every contender's place in one JSON text, so that rating 100,000 battles
-- reads 100,000 short rows in key order instead of joining 300,000
-- standings to their contenders.
--
-- The store writes a battle's row in the transaction that closes it and
-- deletes it in the one that archives it; a row never changes otherwise,
-- as a closed battle's standings never do. `entries` is a JSON array of
-- [contender_type, reference_id as 32 lowercase hex digits, rank,
-- display_name], one per standing, in no particular order.

CREATE TABLE battle_results (
    battle_id   BLOB    PRIMARY KEY REFERENCES battles (id),
    battle_type TEXT    NOT NULL,
    closed_at   INTEGER NOT NULL,
    entries     TEXT    NOT NULL CHECK (json_valid(entries) AND json_type(entries) = 'array')
) WITHOUT ROWID;

-- The battles closed before this migration. The same SELECT as the store's
-- (battles.rs, `INSERT_RESULT`), for every closed or published battle.
INSERT INTO battle_results (battle_id, battle_type, closed_at, entries)
SELECT b.id, b.battle_type, coalesce(b.closed_at, b.updated_at),
       (SELECT json_group_array(json_array(c.contender_type, lower(hex(c.reference_id)), s.rank, c.display_name))
          FROM battle_standings s
          JOIN battle_contenders c ON c.battle_id = s.battle_id AND c.id = s.contender_id
         WHERE s.battle_id = b.id)
  FROM battles b
 WHERE b.status IN ('closed', 'published');

-- A number that changes whenever a row comes or goes, so that a server can
-- keep a leaderboard until a battle closes or is archived (created after the
-- backfill, which needs no counting).
CREATE TABLE battle_results_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO battle_results_version (id, version) VALUES (1, 0);
CREATE TRIGGER battle_results_added AFTER INSERT ON battle_results
BEGIN
    UPDATE battle_results_version SET version = version + 1 WHERE id = 1;
END;
CREATE TRIGGER battle_results_removed AFTER DELETE ON battle_results
BEGIN
    UPDATE battle_results_version SET version = version + 1 WHERE id = 1;
END;
