-- The words lens_fts holds, read by search: a prefix term longer than the
-- prefix indexes (more than 4 characters) that completes to one word only
-- is searched as that word. FTS5 answers such a prefix term by merging the
-- lists of every word it completes to, again on each MATCH a search runs;
-- one word's list it reads directly, and newest first can stop early.
CREATE VIRTUAL TABLE lens_fts_vocab USING fts5vocab(lens_fts, 'row');
