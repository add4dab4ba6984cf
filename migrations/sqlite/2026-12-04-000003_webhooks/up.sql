-- HOOK-1..6: webhook endpoints, each delivered from the event log at its
-- own cursor (an event position, EVT-1a; "" before the first event).
-- Times are µs since the epoch (DM-2). The secret is kept to sign with;
-- nothing reads it back out (HOOK-6). During a rotation's overlap the
-- previous secret signs too, until previous_until. The lease (owner and
-- end) lets one worker at a time deliver an endpoint (HOOK-2); a crashed
-- worker's lapses. delivered and failed count attempts for /metrics.
CREATE TABLE webhooks (
    id TEXT NOT NULL PRIMARY KEY,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_until BIGINT,
    state TEXT NOT NULL,
    cursor TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    failing_since BIGINT,
    failures INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    last_attempt_at BIGINT,
    next_attempt_at BIGINT,
    skipped_after TEXT NOT NULL DEFAULT '',
    skipped_through TEXT NOT NULL DEFAULT '',
    lease_owner TEXT,
    lease_until BIGINT,
    delivered BIGINT NOT NULL DEFAULT 0,
    failed BIGINT NOT NULL DEFAULT 0
);
