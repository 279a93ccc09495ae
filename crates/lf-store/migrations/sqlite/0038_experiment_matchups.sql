-- Experiments' ratings and the judge's dollars (issue 35, items 2 and 5).
-- experiment_matchups: each judged pairwise verdict of a cell (the
-- contender against its baseline, named as battles name them), written
-- with the cell's result and rated beside closed battles; its version is
-- bumped in the same transaction, so a leaderboard kept under one version
-- is rated again once another is written. judge_cost_usd: what the
-- judge's calls of a cell cost, summed with the answers' dollars by
-- get_experiment (back-filled from the outcomes' judgements).
-- Released migrations are never edited: add a new file instead.
CREATE TABLE experiment_matchups (
    id             BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    experiment_id  BLOB    NOT NULL REFERENCES experiments (id),
    position       INTEGER NOT NULL,
    contender      INTEGER NOT NULL,
    rep            INTEGER NOT NULL,
    contender_type TEXT    NOT NULL,
    contender_ref  BLOB    NOT NULL CHECK (length(contender_ref) = 16),
    contender_name TEXT    NOT NULL,
    baseline_type  TEXT    NOT NULL,
    baseline_ref   BLOB    NOT NULL CHECK (length(baseline_ref) = 16),
    baseline_name  TEXT    NOT NULL,
    score          REAL    NOT NULL CHECK (score >= 0 AND score <= 1),
    FOREIGN KEY (experiment_id, position, contender, rep)
        REFERENCES experiment_results (experiment_id, position, contender, rep)
);

CREATE TABLE experiment_matchups_version (
    id      INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO experiment_matchups_version (id, version) VALUES (1, 0);

ALTER TABLE experiment_results ADD COLUMN judge_cost_usd REAL NOT NULL DEFAULT 0;
UPDATE experiment_results SET judge_cost_usd = (
    SELECT coalesce(sum(json_extract(o.value, '$.judged.cost_usd')), 0) FROM json_each(experiment_results.outcomes) o
) WHERE outcomes LIKE '%"judged"%';
DROP INDEX experiment_results_tallies;
CREATE INDEX experiment_results_tallies ON experiment_results
    (experiment_id, contender, passed, score, input_tokens, output_tokens, cost_usd, judge_cost_usd, credits, error);
