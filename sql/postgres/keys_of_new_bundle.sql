SELECT (SELECT CASE WHEN (("tasks"."workspace_id" = $1)) THEN ($2) ELSE (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "tasks"."workspace_id")
LIMIT $3), $4)) END
FROM "tasks"
WHERE ("tasks"."id" = $5)
LIMIT $6);
-- binds: ["", "", 1, "", "<task_id>", 1]
