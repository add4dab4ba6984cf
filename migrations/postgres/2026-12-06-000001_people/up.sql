-- PPL-1: the directory, the people the host says clarion may ask. No rule
-- reads name or email (visibility is by user_id alone); an empty string is
-- a field the host never gave or cleared. Never pruned (REL-8).
CREATE TABLE users (
    user_id TEXT NOT NULL PRIMARY KEY,
    name TEXT NOT NULL DEFAULT '',
    email TEXT NOT NULL DEFAULT ''
);
-- PPL-2: a workspace's members, replaced whole by set_members. A member
-- need not be in the directory, so user_id is not foreign-keyed; the
-- membership goes with its workspace. workspace_members_by_user finds the
-- workspaces one user belongs to (PPL-1a's shared workspaces, PPL-3).
CREATE TABLE workspace_members (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_by_user ON workspace_members (user_id, workspace_id);
