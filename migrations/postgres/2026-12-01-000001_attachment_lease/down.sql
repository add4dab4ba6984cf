DROP INDEX bundles_undelivered;
DROP TABLE attachments;
DROP TABLE handles;
