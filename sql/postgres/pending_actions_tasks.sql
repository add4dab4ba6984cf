SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = ANY($1))
AND ($2
OR ((("tasks"."workspace_id" = $3)
OR (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "tasks"."workspace_id")
LIMIT $4), $5) = $6))
OR (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE (("workspaces"."id" = "tasks"."workspace_id")
AND ("workspaces"."owner_id" = $7)) OFFSET $8)
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "tasks"."workspace_id")
AND ("workspace_members"."user_id" = $9)) OFFSET $10)))));
-- binds: [["<task_id>"], false, "", 1, "", "", "<user_id>", 0, "<user_id>", 0]
