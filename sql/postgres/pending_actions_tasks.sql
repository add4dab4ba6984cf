SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = ANY($1))
AND ($2
OR ((CASE WHEN (("tasks"."workspace_id" = $3)) THEN ($4) ELSE (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "tasks"."workspace_id")
LIMIT $5), $6)) END = $7)
OR (CASE WHEN (("tasks"."workspace_id" = $8)) THEN ($9) ELSE (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "tasks"."workspace_id")
LIMIT $10), $11)) END = $12))));
-- binds: [["<task_id>"], false, "", "", 1, "", "", "", "", 1, "", "<user_id>"]
