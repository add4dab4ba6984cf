-- LIFE-12: names for people. A workspace's display name and a task's
-- title, shown beside their ids (LIST-11) and read by no rule. A new row
-- starts unnamed; an upsert that omits them keeps the stored value.
ALTER TABLE workspaces ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN title TEXT NOT NULL DEFAULT '';
