-- EVT-1: the durable event log. Not foreign-keyed to bundles: deleting a
-- bundle keeps its events. EVT-1a: SQLite serializes writers, so the
-- autoincrement `seq` alone orders events; `txid` is always 0 here and
-- exists so both backends share one shape and one position, (txid, seq).
-- `workspace_id` is the one of the bundle's task at append (AUTH-3 is
-- applied to it when read); `task_exists` is false when the bundle had no
-- task (AUTH-4), and then only `system` reads the event.
CREATE TABLE events (
    seq INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    txid BIGINT NOT NULL DEFAULT 0,
    event_type TEXT NOT NULL,
    at BIGINT NOT NULL,
    pending_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    task_exists BOOLEAN NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE UNIQUE INDEX events_by_position ON events (txid, seq);
-- EVT-3: the highest position `prune` deleted; one row.
CREATE TABLE event_horizon (
    id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    pruned_txid BIGINT NOT NULL,
    pruned_seq BIGINT NOT NULL
);
INSERT INTO event_horizon (id, pruned_txid, pruned_seq) VALUES (1, 0, 0);
