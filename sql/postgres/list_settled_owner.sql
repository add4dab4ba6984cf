SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE (((("bundles"."responded_at" <= $1)
AND (("bundles"."responded_at" < $2)
OR ("bundles"."pending_id" < $3)))
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($4
OR (("bundles"."owner_key" = $5)
OR ("bundles"."owner_key" = $6)))
AND ($7
OR ("bundles"."kind" != $8))))
AND ($9
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $10)) OFFSET $11)))
AND ((("bundles"."owner_key" || $12)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $13)
OR ("bundle_questions"."status" = $14))
OR ("bundle_questions"."status" = $15))) OFFSET $16))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $17))
OR ("bundle_questions"."status" = $18))) OFFSET $19))))
AND ("bundles"."owner_key" = $20))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $21;
-- binds: [0, 0, "<pending_id>", false, "", "<user_id>", false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<owner_key>", 51]
