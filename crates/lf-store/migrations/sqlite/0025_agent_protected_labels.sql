-- An AI Lenser's policy flag: whether it may move and remove its owner's
-- protected lens labels (production, and those the owner protects). Off
-- for every agent until its owner turns it on.
--
-- Conventions as in 0001: booleans INTEGER 0 or 1.
-- Released migrations are never edited: add a new file instead.

ALTER TABLE agents ADD COLUMN can_move_protected_labels INTEGER NOT NULL DEFAULT 0
    CHECK (can_move_protected_labels IN (0, 1));
