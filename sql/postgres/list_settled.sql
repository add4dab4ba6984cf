SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE (("bundles"."responded_at", "bundles"."pending_id") < ($1, $2)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($3
OR (("bundles"."owner_key" = $4)
OR ("bundles"."owner_key" = $5)))
AND ($6
OR ("bundles"."kind" != $7))))
AND ($8
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $9)) OFFSET $10)))
AND ((("bundles"."owner_key" || $11)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $12)
OR ("bundle_questions"."status" = $13))
OR ("bundle_questions"."status" = $14))) OFFSET $15))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $16))
OR ("bundle_questions"."status" = $17))) OFFSET $18))))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $19;
-- binds: [0, "<pending_id>", false, "", "<user_id>", false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, 51]
