-- An experiment's judge: the model profile (name or id, as given) that
-- grades its rubric, factuality and pairwise assertions; none without them.
-- Released migrations are never edited: add a new file instead.
ALTER TABLE experiments ADD COLUMN judge TEXT;
