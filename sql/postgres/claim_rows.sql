UPDATE "bundle_questions"
SET "status" = $1, "response" = CASE "bundle_questions"."id" WHEN $2 THEN $3 WHEN $4 THEN $5 END
WHERE (((("bundle_questions"."pending_id" = $6)
AND "bundle_questions"."id" IN ($7, $8))
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $9))
OR ("bundle_questions"."status" = $10)))
AND EXISTS (SELECT "bundles"."pending_id"
FROM "bundles"
WHERE ((((EXISTS (SELECT "bundle_questions"."id"
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
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $19)))
AND ("bundles"."pending_id" = $20)))) RETURNING "bundle_questions"."id";
-- binds: ["<status>", 1, Some("<answer 1>"), 2, Some("<answer 2>"), "<pending_id>", 1, 2, "", "pending", "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "<pending_id>"]
