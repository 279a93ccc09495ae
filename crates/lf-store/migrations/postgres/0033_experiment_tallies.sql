-- get_experiment's sums per contender read this index alone, never the
-- result rows, whose answers and outcomes make them long: at 100,000 cells
-- the rows were most of the reading.
-- Released migrations are never edited: add a new file instead.
CREATE INDEX experiment_results_tallies ON experiment_results
    (experiment_id, contender, passed, score, input_tokens, output_tokens, cost_usd, credits, error);
