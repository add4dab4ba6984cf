SELECT "sessions"."state", "sessions"."task_id", (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "sessions"."id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $1), (SELECT "tasks"."title"
FROM "tasks"
WHERE ("tasks"."id" = "sessions"."task_id")
LIMIT $2), (SELECT "tasks"."workspace_id"
FROM "tasks"
WHERE ("tasks"."id" = "sessions"."task_id")
LIMIT $3), (SELECT "workspaces"."name"
FROM "workspaces"
WHERE ("workspaces"."id" = (SELECT "tasks"."workspace_id"
FROM "tasks"
WHERE ("tasks"."id" = "sessions"."task_id")
LIMIT $4))
LIMIT $5)
FROM "sessions"
WHERE ("sessions"."id" = $6);
-- binds: [1, 1, 1, 1, 1, "<session_id>"]
