-- The tools an outside MCP server (a connection of provider mcp) listed
-- when it was saved or refreshed, with each tool's mode: one JSON array
-- per connection, as lf-workflow writes it ([{name, description,
-- input_schema, annotations, mode}]). Removing the connection removes
-- its tools.
-- Released migrations are never edited: add a new file instead.
CREATE TABLE connection_tools (
    owner_id       BLOB    NOT NULL,
    connection_ref TEXT    NOT NULL,
    tools          TEXT    NOT NULL CHECK (json_valid(tools) AND json_type(tools) = 'array'),
    listed_at      INTEGER NOT NULL,
    PRIMARY KEY (owner_id, connection_ref),
    FOREIGN KEY (owner_id, connection_ref) REFERENCES connections (owner_id, connection_ref) ON DELETE CASCADE
) WITHOUT ROWID;
