DROP INDEX bundles_due;
ALTER TABLE bundles DROP COLUMN default_response;
ALTER TABLE bundles DROP COLUMN on_expire;
ALTER TABLE bundles DROP COLUMN expires_at;
