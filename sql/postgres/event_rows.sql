SELECT $1, $2, "bundles"."pending_id", coalesce("bundles"."task_key", $3), coalesce((SELECT "tasks"."workspace_id"
FROM "tasks"
WHERE ("tasks"."id" = "bundles"."task_key")
LIMIT $4), $5), ((("bundles"."owner_key" || $6)) IS NOT NULL), "bundles"."kind", "bundles"."human_only", $7
FROM "bundles"
WHERE ("bundles"."pending_id" = ANY($8));
-- binds: ["<type>", 0, "", 1, "", "", "<data>", ["<pending_id>"]]
