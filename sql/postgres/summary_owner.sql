SELECT COUNT(*), min("bundles"."created_at"), sum(CAST((SELECT COUNT(*)
FROM "bundle_questions" AS "counted_rows"
WHERE (((("counted_rows"."status" IS NULL)
OR ("counted_rows"."status" = $1))
OR ("counted_rows"."status" = $2))
AND ("counted_rows"."pending_id" = "bundles"."pending_id"))
LIMIT $3) AS INTEGER))
FROM "bundles"
WHERE (((((("bundles"."may_be_active"
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
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $13))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $14))
OR ("bundle_questions"."status" = $15))) OFFSET $16)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $17)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $18))
AND ("sessions"."state" != $19))
AND ("sessions"."state" != $20)) OFFSET $21))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $22)))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $23)) OFFSET $24)))
AND ("bundles"."owner_key" = ANY($25)));
-- binds: ["", "pending", 1, false, "", "<user_id>", false, "permission", true, "", 0, "", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0, ["", "<user_id>"]]
