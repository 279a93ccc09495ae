-- What get_leaderboard reads: one row per closed or published battle, with
-- every contender's place in one JSON text, so that rating 100,000 battles
-- reads 100,000 short rows in key order instead of joining 300,000
-- standings to their contenders.
--
-- The store writes a battle's row in the transaction that closes it and
-- deletes it in the one that archives it; a row never changes otherwise,
-- as a closed battle's standings never do. `entries` is a JSON array of
-- [contender_type, reference_id, rank, display_name], one per standing, in
-- no particular order (text, as the SQLite schema stores it).

CREATE TABLE battle_results (
    battle_id   uuid        PRIMARY KEY REFERENCES battles (id),
    battle_type text        NOT NULL,
    closed_at   timestamptz NOT NULL,
    entries     text        NOT NULL
);

-- The battles closed before this migration. The same SELECT as the store's
-- (battles.rs, `INSERT_RESULT`), for every closed or published battle.
INSERT INTO battle_results (battle_id, battle_type, closed_at, entries)
SELECT b.id, b.battle_type, coalesce(b.closed_at, b.updated_at),
       coalesce((SELECT json_agg(json_build_array(c.contender_type, c.reference_id, s.rank, c.display_name))
                   FROM battle_standings s
                   JOIN battle_contenders c ON c.battle_id = s.battle_id AND c.id = s.contender_id
                  WHERE s.battle_id = b.id)::text, '[]')
  FROM battles b
 WHERE b.status IN ('closed', 'published');

-- A number that changes whenever a row comes or goes, so that a server can
-- keep a leaderboard until a battle closes or is archived (created after the
-- backfill, which needs no counting). Bumping it locks its row until the
-- transaction ends: closing battles take turns there, which they can afford.
CREATE TABLE battle_results_version (
    id      smallint PRIMARY KEY CHECK (id = 1),
    version bigint   NOT NULL
);
INSERT INTO battle_results_version (id, version) VALUES (1, 0);
CREATE FUNCTION battle_results_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE battle_results_version SET version = version + 1 WHERE id = 1;
    RETURN NULL;
END
$$;
CREATE TRIGGER battle_results_bump AFTER INSERT OR DELETE ON battle_results
    FOR EACH STATEMENT EXECUTE FUNCTION battle_results_bump();
