SELECT "workspace_members"."workspace_id"
FROM ("workspace_members" INNER JOIN "workspaces" ON ("workspace_members"."workspace_id" = "workspaces"."id"))
WHERE ((("workspace_members"."user_id" = $1)
AND ("workspaces"."owner_id" != $2))
AND ("workspaces"."owner_id" != $3));
-- binds: ["<user_id>", "<user_id>", ""]
