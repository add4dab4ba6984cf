ALTER TABLE webhooks DROP COLUMN links;
DROP TABLE link_uses;
DROP TABLE link_keys;
