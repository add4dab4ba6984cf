-- DEL-3: attachment is a lease. Each open handle keeps one heartbeat row,
-- renewed once per tick while an agent of it waits; an attachment names the
-- handle a bundle is attached to, and the bundle counts as detached once
-- that handle's row has lapsed (its process died, or nobody waits any more).
CREATE TABLE handles (
    id TEXT NOT NULL PRIMARY KEY,
    alive_until BIGINT NOT NULL
);
CREATE TABLE attachments (
    pending_id TEXT NOT NULL PRIMARY KEY REFERENCES bundles (pending_id) ON DELETE CASCADE,
    handle_id TEXT NOT NULL
);
-- The outbox is now "undelivered and detached or lapsed": read from every
-- undelivered resolution, which are few.
CREATE INDEX bundles_undelivered ON bundles (responded_at, pending_id)
    WHERE response_delivery_pending;
