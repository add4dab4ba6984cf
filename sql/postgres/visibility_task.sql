SELECT EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = $1)
AND ($2
OR (("tasks"."workspace_id" = $3)
OR  NOT (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE ((("workspaces"."id" = "tasks"."workspace_id")
AND ("workspaces"."owner_id" != $4))
AND ("workspaces"."owner_id" != $5)) OFFSET $6))))));
-- binds: ["<task_id>", false, "", "", "<user_id>", 0]
