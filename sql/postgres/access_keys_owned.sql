SELECT "workspaces"."id"
FROM "workspaces"
WHERE ("workspaces"."owner_id" = $1);
-- binds: ["<user_id>"]
