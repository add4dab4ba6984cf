UPDATE "bundle_questions"
SET "status" = $1, "response" = CASE "bundle_questions"."id" WHEN $2 THEN $3 WHEN $4 THEN $5 WHEN $6 THEN $7 WHEN $8 THEN $9 END
WHERE (((("bundle_questions"."pending_id" = $10)
AND "bundle_questions"."id" IN ($11, $12, $13, $14))
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $15))
OR ("bundle_questions"."status" = $16)))
AND EXISTS (SELECT "bundles"."pending_id"
FROM "bundles"
WHERE (((("bundles"."expires_at" IS NOT NULL)
AND ("bundles"."expires_at" <= $17))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $18))
OR ("bundle_questions"."status" = $19))) OFFSET $20)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $21)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $22))
AND ("sessions"."state" != $23))
AND ("sessions"."state" != $24)) OFFSET $25))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $26))))
AND ("bundles"."pending_id" = $27)))) RETURNING "bundle_questions"."id";
-- binds: ["<status>", 1, Some("<answer 1>"), 2, Some("<answer 2>"), 0, None, 0, None, "<pending_id>", 1, 2, 0, 0, "", "pending", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "<pending_id>"]
