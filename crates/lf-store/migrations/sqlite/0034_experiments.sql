-- Experiments (lf-eval's ExperimentStore): every contender asked every
-- case of a pinned dataset version, repeats times. The matrix of cells is
-- implicit: a cell has a row in experiment_cells once claimed (attempts
-- counted before they are made, the lease of whoever may make the next)
-- and a row in experiment_results once answered, written once by the
-- lease's holder. contenders, assertions, tags and outcomes are JSON as
-- lf-eval writes it. Figures are summed by SQL; the latencies of answered
-- cells are read in order from a partial index.
-- Released migrations are never edited: add a new file instead.
CREATE TABLE experiments (
    id              BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    owner_id        BLOB    NOT NULL CHECK (length(owner_id) = 16),
    visibility      TEXT    NOT NULL CHECK (visibility IN ('private', 'community', 'public')),
    dataset_id      BLOB    NOT NULL CHECK (length(dataset_id) = 16),
    dataset_version INTEGER NOT NULL CHECK (dataset_version >= 1),
    case_count      INTEGER NOT NULL CHECK (case_count >= 0),
    contenders      TEXT    NOT NULL CHECK (json_valid(contenders) AND json_type(contenders) = 'array'),
    assertions      TEXT    NOT NULL CHECK (json_valid(assertions) AND json_type(assertions) = 'array'),
    repeats         INTEGER NOT NULL CHECK (repeats BETWEEN 1 AND 10),
    concurrency     INTEGER NOT NULL CHECK (concurrency >= 1),
    budget_credits  INTEGER CHECK (budget_credits IS NULL OR budget_credits >= 1),
    status          TEXT    NOT NULL CHECK (status IN ('running', 'completed', 'cancelled', 'budget_spent')),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    created_by      BLOB    NOT NULL CHECK (length(created_by) = 16),
    agent_id        BLOB    CHECK (agent_id IS NULL OR length(agent_id) = 16)
);
CREATE INDEX experiments_running ON experiments (status, created_at) WHERE status = 'running';

CREATE TABLE experiment_cells (
    experiment_id BLOB    NOT NULL REFERENCES experiments (id),
    position      INTEGER NOT NULL CHECK (position >= 1),
    contender     INTEGER NOT NULL CHECK (contender >= 0),
    rep           INTEGER NOT NULL CHECK (rep >= 1),
    attempts      INTEGER NOT NULL CHECK (attempts >= 0),
    holder        TEXT    NOT NULL,
    lease_until   INTEGER NOT NULL,
    PRIMARY KEY (experiment_id, position, contender, rep)
) WITHOUT ROWID;

CREATE TABLE experiment_results (
    experiment_id BLOB    NOT NULL REFERENCES experiments (id),
    position      INTEGER NOT NULL CHECK (position >= 1),
    contender     INTEGER NOT NULL CHECK (contender >= 0),
    rep           INTEGER NOT NULL CHECK (rep >= 1),
    tags          TEXT    NOT NULL CHECK (json_valid(tags) AND json_type(tags) = 'array'),
    answer        TEXT,
    outcomes      TEXT    NOT NULL CHECK (json_valid(outcomes) AND json_type(outcomes) = 'array'),
    passed        INTEGER NOT NULL CHECK (passed IN (0, 1)),
    score         REAL    NOT NULL,
    error         TEXT,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd      REAL    NOT NULL,
    credits       INTEGER NOT NULL,
    latency_ms    INTEGER NOT NULL,
    attempts      INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (experiment_id, position, contender, rep)
);
CREATE INDEX experiment_results_latency
    ON experiment_results (experiment_id, contender, latency_ms) WHERE error IS NULL;
CREATE INDEX experiment_results_by_contender ON experiment_results (experiment_id, contender, position, rep);
