SELECT DISTINCT CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."kind", (SELECT "sessions"."is_primary"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $1)
FROM "bundles"
WHERE ((((("bundles"."task_key" = ANY($2))
AND (CAST("bundles"."may_be_active" AS INTEGER) = $3))
AND ((("bundles"."owner_key" || $4)) IS NOT NULL))
AND (($5
OR (("bundles"."owner_key" = $6)
OR ("bundles"."owner_key" = $7)))
AND ($8
OR ("bundles"."kind" != $9))))
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
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $19)))));
-- binds: [1, ["<task_id>"], 1, "", false, "", "<user_id>", false, "permission", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0]
