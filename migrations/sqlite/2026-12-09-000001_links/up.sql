-- LINK-1: the keys answer links are signed with: 256 bits from the OS,
-- hex. The newest key not retired signs; a key retired less than 7 days
-- ago still verifies; `rotate_link_key {now: true}` deletes every other.
-- Two processes that create the first key at once leave two current keys,
-- both of which verify: harmless.
CREATE TABLE link_keys (
    id TEXT NOT NULL PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    retired_at BIGINT
);
-- LINK-3: the links used, each written in the transaction of the win or
-- the vote that used it; kept until the link's POSTs would end anyway
-- (REL-8 prunes them after expires_at).
CREATE TABLE link_uses (
    link_id TEXT NOT NULL PRIMARY KEY,
    pending_id TEXT NOT NULL,
    used_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX link_uses_expiry ON link_uses (expires_at);
-- LINK-4: an endpoint that receives answer links in its payloads.
ALTER TABLE webhooks ADD COLUMN links BOOLEAN NOT NULL DEFAULT FALSE;
