-- The host mirror (LIFE-1) and the inbox itself (SPEC §3).
-- Timestamps are microseconds since the Unix epoch (DM-2), so ordering and
-- equality are exact and identical on both backends.

CREATE TABLE workspaces (
    id TEXT NOT NULL PRIMARY KEY,
    owner_id TEXT NOT NULL DEFAULT ''
);

-- workspace_id is deliberately not a foreign key: it may be empty or dangling (AUTH-3).
CREATE TABLE tasks (
    id TEXT NOT NULL PRIMARY KEY,
    workspace_id TEXT NOT NULL DEFAULT ''
);

CREATE TABLE sessions (
    id TEXT NOT NULL PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    state TEXT NOT NULL,
    is_primary BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX sessions_by_task ON sessions (task_id);

-- seq is the creation order used to break ties between turns (ACT-2).
CREATE TABLE turns (
    seq SERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    started_at BIGINT NOT NULL
);
CREATE INDEX turns_newest_first ON turns (session_id, started_at, seq, id);

-- One row per bundle. task_id is not a foreign key: it may be empty (the
-- session's task is used, AUTH-4) or name a task that no longer exists.
-- pending_id compares bytewise (COLLATE "C"), as on SQLite: the listing
-- order and its cursors are the same on both backends whatever the locale.
CREATE TABLE bundles (
    pending_id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    task_id TEXT NOT NULL DEFAULT '',
    turn_id TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'question',
    context TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    idempotency_key TEXT,
    -- Index hint (ACT-4): false only once the bundle can never be active
    -- again. Never consulted alone; the full ACT-1 predicate always decides.
    may_be_active BOOLEAN NOT NULL DEFAULT TRUE,
    agent_disconnected BOOLEAN NOT NULL DEFAULT FALSE,
    response_delivery_pending BOOLEAN NOT NULL DEFAULT FALSE,
    reject_reason TEXT NOT NULL DEFAULT '',
    responded_at BIGINT,
    resolved_by_kind TEXT,
    resolved_by_id TEXT,
    delivery_lease_until BIGINT
);
CREATE INDEX bundles_by_session_turn ON bundles (session_id, turn_id);
CREATE UNIQUE INDEX bundles_idempotency ON bundles (session_id, idempotency_key);
CREATE INDEX bundles_listing_order ON bundles (created_at, pending_id) WHERE may_be_active;
CREATE INDEX bundles_outbox ON bundles (responded_at, pending_id)
    WHERE response_delivery_pending AND agent_disconnected;

-- One row per question. session_id and turn_id repeat the bundle's so that a
-- malformed bundle (rows spread over sessions or turns, DM-1) is detectable.
CREATE TABLE bundle_questions (
    id SERIAL PRIMARY KEY,
    -- Same collation as bundles.pending_id, so the correlated lookups by
    -- pending_id can use this table's index.
    pending_id TEXT COLLATE "C" NOT NULL REFERENCES bundles (pending_id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    question_id TEXT NOT NULL DEFAULT '',
    question_index INTEGER,
    payload TEXT NOT NULL DEFAULT '',
    status TEXT,
    response TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX bundle_questions_by_bundle ON bundle_questions (pending_id);
