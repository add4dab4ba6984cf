SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE ("workspace_members"."user_id" = $1);
-- binds: ["<user_id>"]
