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
    id             uuid             PRIMARY KEY,
    experiment_id  uuid             NOT NULL REFERENCES experiments (id),
    position       bigint           NOT NULL,
    contender      bigint           NOT NULL,
    rep            bigint           NOT NULL,
    contender_type text             NOT NULL,
    contender_ref  uuid             NOT NULL,
    contender_name text             NOT NULL,
    baseline_type  text             NOT NULL,
    baseline_ref   uuid             NOT NULL,
    baseline_name  text             NOT NULL,
    score          double precision NOT NULL CHECK (score >= 0 AND score <= 1),
    FOREIGN KEY (experiment_id, position, contender, rep)
        REFERENCES experiment_results (experiment_id, position, contender, rep)
);

CREATE TABLE experiment_matchups_version (
    id      integer PRIMARY KEY CHECK (id = 1),
    version bigint  NOT NULL
);
INSERT INTO experiment_matchups_version (id, version) VALUES (1, 0);

ALTER TABLE experiment_results ADD COLUMN judge_cost_usd double precision NOT NULL DEFAULT 0;
UPDATE experiment_results SET judge_cost_usd = (
    SELECT coalesce(sum((o -> 'judged' ->> 'cost_usd')::double precision), 0)
    FROM jsonb_array_elements(experiment_results.outcomes::jsonb) o
) WHERE outcomes LIKE '%"judged"%';
DROP INDEX experiment_results_tallies;
CREATE INDEX experiment_results_tallies ON experiment_results
    (experiment_id, contender, passed, score, input_tokens, output_tokens, cost_usd, judge_cost_usd, credits, error);
