UPDATE "bundles"
SET "may_be_active" = $1
WHERE ((("bundles"."session_id" = $2)
AND "bundles"."may_be_active")
AND ( NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $3))
OR ("bundle_questions"."status" = $4))) OFFSET $5))
OR  NOT (("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $6)))));
-- binds: [false, "<session_id>", "", "pending", 0, 1]
