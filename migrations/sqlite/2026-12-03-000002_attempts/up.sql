-- AUD-1/2: the attempt ledger, one entry per resolve or cancel attempt that
-- passed the capability and visibility checks, and one per deadline
-- settlement. Append-only and not foreign-keyed to bundles: deleting a
-- bundle keeps its entries; only `prune` removes them, by `at` (REL-8).
-- `at` is µs since the epoch like every other time (DM-2); `digest` the
-- lowercase hex SHA-256 of AUD-5's compact JSON.
CREATE TABLE attempts (
    id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    pending_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    principal_kind TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    outcome TEXT NOT NULL,
    digest TEXT NOT NULL
);
-- AUD-3: one bundle's entries in (at, id) order.
CREATE INDEX attempts_by_bundle ON attempts (pending_id, at, id);
-- AUD-3's export in keyset pages, and prune by `at`.
CREATE INDEX attempts_by_time ON attempts (at, id);
