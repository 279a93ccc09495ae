-- Each answer's style in battle_results.entries, for the leaderboard's
-- style control: an entry is now [contender_type, reference_id, rank,
-- display_name, characters, markdown marks] (lf-battle's Style: length()
-- characters and each '#', '*', '`' and '|'; null for a contender that did
-- not answer). The store writes new rows so (sql.rs, INSERT_RESULT); the
-- rows written before are rewritten here by the same SELECT.
-- Battles gain tags (categories get_leaderboard can rate alone: a JSON
-- array of text, lf-battle's battle_tags), and battle_results a copy of
-- them written with the row.
-- Released migrations are never edited: add a new file instead.
ALTER TABLE battles ADD COLUMN tags text NOT NULL DEFAULT '[]';

-- battle_results (from here on, run again after 0004 by the store's tests):
ALTER TABLE battle_results ADD COLUMN tags text NOT NULL DEFAULT '[]';
UPDATE battle_results r SET tags = coalesce((SELECT b.tags FROM battles b WHERE b.id = r.battle_id), '[]'),
    entries = coalesce((
    SELECT json_agg(json_build_array(c.contender_type, c.reference_id, s.rank, c.display_name,
               length(a.text),
               length(a.text) - length(replace(replace(replace(replace(a.text, '#', ''), '*', ''), '`', ''), '|', ''))))
      FROM battle_standings s
      JOIN battle_contenders c ON c.battle_id = s.battle_id AND c.id = s.contender_id
      LEFT JOIN battle_submissions a ON a.battle_id = s.battle_id AND a.contender_id = s.contender_id
     WHERE s.battle_id = r.battle_id)::text, '[]');
