-- An AI Lenser's policy flag: whether it may move and remove its owner's
-- protected lens labels (production, and those the owner protects). Off
-- for every agent until its owner turns it on.
--
-- Released migrations are never edited: add a new file instead.

ALTER TABLE agents ADD COLUMN can_move_protected_labels boolean NOT NULL DEFAULT false;
