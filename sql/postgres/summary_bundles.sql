SELECT COUNT(*), min("bundles"."created_at")
FROM "bundles"
WHERE ((((("bundles"."may_be_active"
AND (($1
OR (("bundles"."owner_key" = $2)
OR ("bundles"."owner_key" = $3)))
AND ($4
OR ("bundles"."kind" != $5))))
AND ($6
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $7)) OFFSET $8)))
AND ((("bundles"."owner_key" || $9)) IS NOT NULL))
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $10))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $11))
OR ("bundle_questions"."status" = $12))) OFFSET $13)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $14)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $15))
AND ("sessions"."state" != $16))
AND ("sessions"."state" != $17)) OFFSET $18))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $19)))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $20)) OFFSET $21)));
-- binds: [false, "", "<user_id>", false, "permission", true, "", 0, "", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0]
