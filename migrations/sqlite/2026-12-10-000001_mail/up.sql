-- MAIL-1a: the mail worker's one row (id 1), made when mail is first
-- configured, its cursor then at the head of the event log (an event
-- position, EVT-1a; "" before the first event). done_at is the event
-- after the cursor whose recipients in done (a JSON array of user ids)
-- were already sent or dropped, so a redelivery after a crash skips
-- nobody and resends at most the one in flight. failures, failing_since
-- and next_attempt_at are the current message's retries (HOOK-2's
-- delays); give_up_us is how long one may fail, and ran_at when a worker
-- last held the lease: prune keeps the events after the cursor while
-- ran_at is within give_up_us (REL-8). The lease (owner and end) lets one
-- worker at a time send; a crashed one's lapses. Times are µs (DM-2).
CREATE TABLE mail_state (
    id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    cursor TEXT NOT NULL,
    done_at TEXT NOT NULL DEFAULT '',
    done TEXT NOT NULL DEFAULT '[]',
    failures INTEGER NOT NULL DEFAULT 0,
    failing_since BIGINT,
    next_attempt_at BIGINT,
    last_error TEXT NOT NULL DEFAULT '',
    lease_owner TEXT,
    lease_until BIGINT,
    ran_at BIGINT NOT NULL,
    give_up_us BIGINT NOT NULL,
    sent BIGINT NOT NULL DEFAULT 0,
    failed BIGINT NOT NULL DEFAULT 0
);
