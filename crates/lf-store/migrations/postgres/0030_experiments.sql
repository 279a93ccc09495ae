-- Experiments (lf-eval's ExperimentStore): every contender asked every
-- case of a pinned dataset version, repeats times. The matrix of cells is
-- implicit: a cell has a row in experiment_cells once claimed (attempts
-- counted before they are made, the lease of whoever may make the next)
-- and a row in experiment_results once answered, written once by the
-- lease's holder. contenders, assertions, tags and outcomes are JSON stored
-- as text, as on SQLite. Figures are summed by SQL; the latencies of
-- answered cells are read in order from a partial index.
-- Released migrations are never edited: add a new file instead.
CREATE TABLE experiments (
    id              uuid        PRIMARY KEY,
    owner_id        uuid        NOT NULL,
    visibility      text        NOT NULL CHECK (visibility IN ('private', 'community', 'public')),
    dataset_id      uuid        NOT NULL,
    dataset_version bigint      NOT NULL CHECK (dataset_version >= 1),
    case_count      bigint      NOT NULL CHECK (case_count >= 0),
    contenders      text        NOT NULL,
    assertions      text        NOT NULL,
    repeats         bigint      NOT NULL CHECK (repeats BETWEEN 1 AND 10),
    concurrency     bigint      NOT NULL CHECK (concurrency >= 1),
    budget_credits  bigint      CHECK (budget_credits IS NULL OR budget_credits >= 1),
    status          text        NOT NULL CHECK (status IN ('running', 'completed', 'cancelled', 'budget_spent')),
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    created_by      uuid        NOT NULL,
    agent_id        uuid
);
CREATE INDEX experiments_running ON experiments (status, created_at) WHERE status = 'running';

CREATE TABLE experiment_cells (
    experiment_id uuid        NOT NULL REFERENCES experiments (id),
    position      bigint      NOT NULL CHECK (position >= 1),
    contender     bigint      NOT NULL CHECK (contender >= 0),
    rep           bigint      NOT NULL CHECK (rep >= 1),
    attempts      bigint      NOT NULL CHECK (attempts >= 0),
    holder        text        NOT NULL,
    lease_until   timestamptz NOT NULL,
    PRIMARY KEY (experiment_id, position, contender, rep)
);

CREATE TABLE experiment_results (
    experiment_id uuid             NOT NULL REFERENCES experiments (id),
    position      bigint           NOT NULL CHECK (position >= 1),
    contender     bigint           NOT NULL CHECK (contender >= 0),
    rep           bigint           NOT NULL CHECK (rep >= 1),
    tags          text             NOT NULL,
    answer        text,
    outcomes      text             NOT NULL,
    passed        boolean          NOT NULL,
    score         double precision NOT NULL,
    error         text,
    input_tokens  bigint           NOT NULL,
    output_tokens bigint           NOT NULL,
    cost_usd      double precision NOT NULL,
    credits       bigint           NOT NULL,
    latency_ms    bigint           NOT NULL,
    attempts      bigint           NOT NULL,
    created_at    timestamptz      NOT NULL,
    PRIMARY KEY (experiment_id, position, contender, rep)
);
CREATE INDEX experiment_results_latency
    ON experiment_results (experiment_id, contender, latency_ms) WHERE error IS NULL;
CREATE INDEX experiment_results_by_contender ON experiment_results (experiment_id, contender, position, rep);
