-- PPL-3, PPL-5: beside owner_key (who owns what it lies in, OPS-3a), a
-- bundle carries workspace_key: '' when every user sees it (no workspace,
-- a dangling or an unowned one), else the id of its task's workspace; NULL
-- when its task does not exist. Who belongs to a workspace is read from
-- workspace_members at read time, so set_members rewrites no bundle row;
-- a member's walk reads one workspace_key range per workspace it belongs
-- to (and does not own), an owner's one owner_key range for all of its own.
ALTER TABLE bundles ADD COLUMN workspace_key TEXT;
UPDATE bundles SET workspace_key = (
    SELECT CASE WHEN tasks.workspace_id = '' THEN ''
        WHEN EXISTS (SELECT 1 FROM workspaces WHERE workspaces.id = tasks.workspace_id
                     AND workspaces.owner_id <> '') THEN tasks.workspace_id
        ELSE '' END
    FROM tasks WHERE tasks.id = bundles.task_key);
CREATE INDEX bundles_by_workspace_key ON bundles (workspace_key, created_at, pending_id)
    WHERE may_be_active;
CREATE INDEX bundles_settled_by_workspace_key ON bundles (workspace_key, responded_at, pending_id)
    WHERE responded_at IS NOT NULL;
-- PPL-6: an escalation grant lets user_id see one bundle from visible_from
-- (microseconds) on. Never revoked; goes with its bundle (REL-8).
CREATE TABLE escalation_grants (
    pending_id TEXT COLLATE "C" NOT NULL REFERENCES bundles (pending_id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    visible_from BIGINT NOT NULL,
    PRIMARY KEY (pending_id, user_id)
);
-- A user's grants whose time has come.
CREATE INDEX escalation_grants_by_user ON escalation_grants (user_id, visible_from, pending_id);
