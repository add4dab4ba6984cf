DROP TABLE escalation_grants;
DROP INDEX workspaces_by_owner;
DROP INDEX bundles_by_access_key;
DROP INDEX bundles_settled_by_access_key;
ALTER TABLE bundles RENAME COLUMN access_key TO owner_key;
UPDATE bundles SET owner_key = (
    SELECT CASE WHEN tasks.workspace_id = '' THEN ''
        ELSE COALESCE((SELECT workspaces.owner_id FROM workspaces
                       WHERE workspaces.id = tasks.workspace_id), '') END
    FROM tasks WHERE tasks.id = bundles.task_key);
CREATE INDEX bundles_by_owner ON bundles (owner_key, created_at, pending_id) WHERE may_be_active;
CREATE INDEX bundles_settled_by_owner ON bundles (owner_key, responded_at, pending_id)
    WHERE responded_at IS NOT NULL;
