SELECT EXISTS (SELECT "bundles"."pending_id"
FROM "bundles"
WHERE (("bundles"."pending_id" = $1)
AND (($2
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $3)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $4)) END)
AND (("tasks"."workspace_id" = $5)
OR  NOT (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE ((("workspaces"."id" = "tasks"."workspace_id")
AND ("workspaces"."owner_id" != $6))
AND ("workspaces"."owner_id" != $7)) OFFSET $8)))) OFFSET $9))
AND ($10
OR ("bundles"."kind" != $11)))));
-- binds: ["<pending_id>", false, "", 1, "", "", "<user_id>", 0, 0, false, "permission"]
