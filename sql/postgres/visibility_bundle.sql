SELECT EXISTS (SELECT "bundles"."pending_id"
FROM "bundles"
WHERE (("bundles"."pending_id" = $1)
AND (($2
OR (("bundles"."owner_key" = $3)
OR ("bundles"."owner_key" = $4)))
AND ($5
OR ("bundles"."kind" != $6)))));
-- binds: ["<pending_id>", false, "", "<user_id>", false, "permission"]
