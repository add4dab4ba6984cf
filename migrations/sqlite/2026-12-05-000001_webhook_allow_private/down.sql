ALTER TABLE webhooks DROP COLUMN allow_private;
