SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, CASE WHEN ((((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $1))
OR ("bundle_questions"."status" = $2))) OFFSET $3)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $4)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $5))
AND ("sessions"."state" != $6))
AND ("sessions"."state" != $7)) OFFSET $8))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $9)))) THEN (EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id") FOR UPDATE)) END, "claim_rows"."id", "claim_rows"."pending_id", "claim_rows"."question_id", "claim_rows"."question_index", "claim_rows"."payload", "claim_rows"."status", "claim_rows"."response", "claim_rows"."created_at"
FROM ("bundles" LEFT OUTER JOIN "bundle_questions" AS "claim_rows" ON ("claim_rows"."pending_id" = "bundles"."pending_id"))
WHERE (("bundles"."pending_id" = $10)
AND (($11
OR (("bundles"."owner_key" = $12)
OR ("bundles"."owner_key" = $13)))
AND ($14
OR ("bundles"."kind" != $15))));
-- binds: ["", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "<pending_id>", false, "", "<user_id>", false, "permission"]
