-- What the direct readers keep (sqlite::direct::ReadCache: a lens and its
-- version, a bearer token, an agent with its members and a grant) is kept
-- until a table it was read from changes. Every change to one of those
-- tables moves this count on, in the transaction that makes it, whichever
-- connection or process writes; the readers look at it where they looked
-- at PRAGMA data_version, which moves on every commit, the action log's and
-- the day's counts of an agent's calls included. The tables the cached reads
-- name are held to this list by a test (sqlite::reads).
-- Released migrations are never edited: add a new file instead.

CREATE TABLE cached_reads_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n    INTEGER NOT NULL
);
INSERT INTO cached_reads_generation (id, n) VALUES (1, 0);

CREATE TRIGGER lenses_insert_moves_cached_reads AFTER INSERT ON lenses
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER lenses_update_moves_cached_reads AFTER UPDATE ON lenses
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER lenses_delete_moves_cached_reads AFTER DELETE ON lenses
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;

CREATE TRIGGER lens_versions_insert_moves_cached_reads AFTER INSERT ON lens_versions
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER lens_versions_update_moves_cached_reads AFTER UPDATE ON lens_versions
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER lens_versions_delete_moves_cached_reads AFTER DELETE ON lens_versions
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;

CREATE TRIGGER version_params_insert_moves_cached_reads AFTER INSERT ON version_params
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER version_params_update_moves_cached_reads AFTER UPDATE ON version_params
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER version_params_delete_moves_cached_reads AFTER DELETE ON version_params
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;

CREATE TRIGGER access_tokens_insert_moves_cached_reads AFTER INSERT ON access_tokens
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER access_tokens_update_moves_cached_reads AFTER UPDATE ON access_tokens
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER access_tokens_delete_moves_cached_reads AFTER DELETE ON access_tokens
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;

CREATE TRIGGER agents_insert_moves_cached_reads AFTER INSERT ON agents
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER agents_update_moves_cached_reads AFTER UPDATE ON agents
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER agents_delete_moves_cached_reads AFTER DELETE ON agents
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;

CREATE TRIGGER agent_members_insert_moves_cached_reads AFTER INSERT ON agent_members
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER agent_members_update_moves_cached_reads AFTER UPDATE ON agent_members
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER agent_members_delete_moves_cached_reads AFTER DELETE ON agent_members
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;

CREATE TRIGGER agent_grants_insert_moves_cached_reads AFTER INSERT ON agent_grants
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER agent_grants_update_moves_cached_reads AFTER UPDATE ON agent_grants
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
CREATE TRIGGER agent_grants_delete_moves_cached_reads AFTER DELETE ON agent_grants
    BEGIN UPDATE cached_reads_generation SET n = n + 1; END;
