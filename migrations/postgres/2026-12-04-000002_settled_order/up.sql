-- LIST-14: a history page (list_settled) walks resolution time, newest
-- first, as a backward scan of one of these: the whole range for `system`,
-- one owner key's range per key for a scoped principal (OPS-3a's walk).
-- Partial to resolved bundles: only a resolution writes responded_at
-- (CLAIM-3), so unresolved bundles never enter them.
CREATE INDEX bundles_settled ON bundles (responded_at, pending_id)
    WHERE responded_at IS NOT NULL;
CREATE INDEX bundles_settled_by_owner ON bundles (owner_key, responded_at, pending_id)
    WHERE responded_at IS NOT NULL;
