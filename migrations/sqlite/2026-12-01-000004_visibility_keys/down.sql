DROP INDEX tasks_by_workspace;
DROP INDEX bundles_by_task;
DROP INDEX bundles_by_owner;
ALTER TABLE bundles DROP COLUMN owner_key;
ALTER TABLE bundles DROP COLUMN task_key;
