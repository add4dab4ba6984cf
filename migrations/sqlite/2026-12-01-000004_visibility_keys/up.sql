-- OPS-3a: visibility carried on the bundle row, so a scoped page walks an
-- index of its own tenants instead of testing every tenant's bundles.
-- task_key is the bundle's task (AUTH-4: its own task_id, else its
-- session's); owner_key is who sees it (AUTH-3): NULL when that task does
-- not exist, '' when every user does (no workspace, a dangling or an
-- unowned one), else the workspace's owner. Both are derived from the
-- mirror and rewritten by every change to it (rules/visibility.rs).
ALTER TABLE bundles ADD COLUMN task_key TEXT;
ALTER TABLE bundles ADD COLUMN owner_key TEXT;
UPDATE bundles SET task_key = CASE WHEN task_id <> '' THEN task_id
    ELSE (SELECT sessions.task_id FROM sessions WHERE sessions.id = bundles.session_id) END;
UPDATE bundles SET owner_key = (
    SELECT CASE WHEN tasks.workspace_id = '' THEN ''
        ELSE COALESCE((SELECT workspaces.owner_id FROM workspaces
                       WHERE workspaces.id = tasks.workspace_id), '') END
    FROM tasks WHERE tasks.id = bundles.task_key);
-- A scoped page walks one owner's bundles in listing order.
CREATE INDEX bundles_by_owner ON bundles (owner_key, created_at, pending_id) WHERE may_be_active;
-- Pending actions (PA-1) and the rewrite after a task changes.
CREATE INDEX bundles_by_task ON bundles (task_key);
-- The rewrite after a workspace changes.
CREATE INDEX tasks_by_workspace ON tasks (workspace_id);
