UPDATE "bundles"
SET "task_key" = CASE WHEN (("bundles"."task_id" != $1)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $2)) END, "owner_key" = (SELECT CASE WHEN (("tasks"."workspace_id" = $3)) THEN ($4) ELSE (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "tasks"."workspace_id")
LIMIT $5), $6)) END
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $7)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $8)) END)
LIMIT $9), "workspace_key" = (SELECT CASE WHEN ((("tasks"."workspace_id" = $10)
OR (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "tasks"."workspace_id")
LIMIT $11), $12) = $13))) THEN ($14) ELSE ("tasks"."workspace_id") END
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $15)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $16)) END)
LIMIT $17)
WHERE ("bundles"."task_key" = ANY(SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."workspace_id" = $18)));
-- binds: ["", 1, "", "", 1, "", "", 1, 1, "", 1, "", "", "", "", 1, 1, "<workspace_id>"]
