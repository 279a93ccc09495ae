-- The experiments on one dataset, newest first (lf-eval's
-- ExperimentStore::of_dataset: the pages offer them to compare with).
-- Released migrations are never edited: add a new file instead.
CREATE INDEX experiments_by_dataset ON experiments (dataset_id, created_at);
