-- Whether every reader of a workflow reads every run of it. A run holds
-- what its starter handed it and what their connections fetched, so by
-- default (false) it is its starter's and the workflow owner's alone; the
-- owner opts a workflow in to public runs.
-- Released migrations are never edited: add a new file instead.

ALTER TABLE workflows ADD COLUMN public_runs boolean NOT NULL DEFAULT false;
