-- REL-8: when a row was expired, so prune can tell how long ago a bundle
-- stopped being active. Rows expired before this migration keep NULL and
-- are never pruned by that rule.
ALTER TABLE bundle_questions ADD COLUMN expired_at BIGINT;
