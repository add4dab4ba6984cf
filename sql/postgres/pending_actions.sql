SELECT DISTINCT CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."kind", (SELECT "sessions"."is_primary"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $1)
FROM "bundles"
WHERE ((((("bundles"."task_key" = ANY($2))
AND "bundles"."may_be_active")
AND ("bundles"."owner_key" IS NOT NULL))
AND (($3
OR (("bundles"."owner_key" = $4)
OR ("bundles"."owner_key" = $5)))
AND ($6
OR ("bundles"."kind" != $7))))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $8))
OR ("bundle_questions"."status" = $9))) OFFSET $10)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $11)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $12))
AND ("sessions"."state" != $13))
AND ("sessions"."state" != $14)) OFFSET $15))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $16))));
-- binds: [1, ["<task_id>"], false, "", "<user_id>", false, "permission", "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0]
