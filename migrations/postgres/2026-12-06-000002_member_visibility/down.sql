DROP TABLE escalation_grants;
DROP INDEX bundles_by_workspace_key;
DROP INDEX bundles_settled_by_workspace_key;
ALTER TABLE bundles DROP COLUMN workspace_key;
