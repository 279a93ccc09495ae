-- Each answer's style in battle_results.entries, for the leaderboard's
-- style control: an entry is now [contender_type, reference_id, rank,
-- display_name, characters, markdown marks] (lf-battle's Style: length()
-- characters and each '#', '*', '`' and '|'; null for a contender that did
-- not answer). The store writes new rows so (sql.rs, INSERT_RESULT); the
-- rows written before are rewritten here by the same SELECT.
-- Released migrations are never edited: add a new file instead.
UPDATE battle_results r SET entries = coalesce((
    SELECT json_agg(json_build_array(c.contender_type, c.reference_id, s.rank, c.display_name,
               length(a.text),
               length(a.text) - length(replace(replace(replace(replace(a.text, '#', ''), '*', ''), '`', ''), '|', ''))))
      FROM battle_standings s
      JOIN battle_contenders c ON c.battle_id = s.battle_id AND c.id = s.contender_id
      LEFT JOIN battle_submissions a ON a.battle_id = s.battle_id AND a.contender_id = s.contender_id
     WHERE s.battle_id = r.battle_id)::text, '[]');
