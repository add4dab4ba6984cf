UPDATE "bundles"
SET "task_key" = CASE WHEN (("bundles"."task_id" != $1)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $2)) END, "access_key" = (SELECT CASE WHEN ((("tasks"."workspace_id" = $3)
OR (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "tasks"."workspace_id")
LIMIT $4), $5) = $6))) THEN ($7) ELSE ("tasks"."workspace_id") END
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $8)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $9)) END)
LIMIT $10)
WHERE ("bundles"."task_key" = $11);
-- binds: ["", 1, "", 1, "", "", "", "", 1, 1, "<task_id>"]
