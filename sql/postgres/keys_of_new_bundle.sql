SELECT (SELECT CASE WHEN ((("tasks"."workspace_id" = $1)
OR (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "tasks"."workspace_id")
LIMIT $2), $3) = $4))) THEN ($5) ELSE ("tasks"."workspace_id") END
FROM "tasks"
WHERE ("tasks"."id" = $6)
LIMIT $7);
-- binds: ["", 1, "", "", "", "<task_id>", 1]
