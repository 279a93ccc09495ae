-- The local lenser: the account a stdio server acts as when
-- LENSERFIGHT_LENSER_ID is unset, created on its first start and kept, so it
-- is the same lenser on every later start. At most one row; the account has
-- no password (lf-auth's NO_PASSWORD), so it can never sign in over HTTP.

CREATE TABLE local_lenser (
    only_row  integer PRIMARY KEY CHECK (only_row = 1),
    lenser_id uuid    NOT NULL UNIQUE REFERENCES lensers (id)
);
