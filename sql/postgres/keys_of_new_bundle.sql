SELECT (SELECT CASE WHEN (("tasks"."workspace_id" = $1)) THEN ($2) ELSE (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "tasks"."workspace_id")
LIMIT $3), $4)) END
FROM "tasks"
WHERE ("tasks"."id" = $5)
LIMIT $6), (SELECT CASE WHEN ((("tasks"."workspace_id" = $7)
OR (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "tasks"."workspace_id")
LIMIT $8), $9) = $10))) THEN ($11) ELSE ("tasks"."workspace_id") END
FROM "tasks"
WHERE ("tasks"."id" = $12)
LIMIT $13);
-- binds: ["", "", 1, "", "<task_id>", 1, "", 1, "", "", "", "<task_id>", 1]
