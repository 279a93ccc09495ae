-- The tools an outside MCP server (a connection of provider mcp) listed
-- when it was saved or refreshed, with each tool's mode: one JSON array
-- per connection, as lf-workflow writes it ([{name, description,
-- input_schema, annotations, mode}]), kept as text for its key order.
-- Removing the connection removes its tools.
-- Released migrations are never edited: add a new file instead.
CREATE TABLE connection_tools (
    owner_id       uuid        NOT NULL,
    connection_ref text        COLLATE "C" NOT NULL,
    tools          text        NOT NULL CHECK (json_typeof(tools::json) = 'array'),
    listed_at      timestamptz NOT NULL,
    PRIMARY KEY (owner_id, connection_ref),
    FOREIGN KEY (owner_id, connection_ref) REFERENCES connections (owner_id, connection_ref) ON DELETE CASCADE
);
