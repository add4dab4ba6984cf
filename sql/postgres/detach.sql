UPDATE "bundles"
SET "agent_disconnected" = $1
WHERE (("bundles"."session_id" = $2)
AND ((("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $3))
AND (((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $4))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $5))
OR ("bundle_questions"."status" = $6))) OFFSET $7)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $8)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $9))
AND ("sessions"."state" != $10))
AND ("sessions"."state" != $11)) OFFSET $12))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $13))))
OR "bundles"."response_delivery_pending"))
AND ("bundles"."agent_disconnected" = $14)));
-- binds: [true, "<session_id>", 1, 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, false]
