-- PPL-3, PPL-5: a bundle's visibility key names its task's workspace
-- instead of that workspace's owner: '' when every user sees it (no
-- workspace, a dangling or an unowned one), else the workspace's id; NULL
-- when its task does not exist. Who may see a workspace (its owner and
-- members) is read from workspaces and workspace_members at read time, so
-- changing members or an owner rewrites no bundle row; a scoped walk reads
-- one index range per workspace the user owns or belongs to.
ALTER TABLE bundles RENAME COLUMN owner_key TO access_key;
DROP INDEX bundles_by_owner;
DROP INDEX bundles_settled_by_owner;
UPDATE bundles SET access_key = (
    SELECT CASE WHEN tasks.workspace_id = '' THEN ''
        WHEN EXISTS (SELECT 1 FROM workspaces WHERE workspaces.id = tasks.workspace_id
                     AND workspaces.owner_id <> '') THEN tasks.workspace_id
        ELSE '' END
    FROM tasks WHERE tasks.id = bundles.task_key);
CREATE INDEX bundles_by_access_key ON bundles (access_key, created_at, pending_id)
    WHERE may_be_active;
CREATE INDEX bundles_settled_by_access_key ON bundles (access_key, responded_at, pending_id)
    WHERE responded_at IS NOT NULL;
-- The workspaces one user owns (PPL-3's walk, PPL-1a).
CREATE INDEX workspaces_by_owner ON workspaces (owner_id, id);
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
