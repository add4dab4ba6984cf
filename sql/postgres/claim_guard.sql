SELECT EXISTS (SELECT "bundles"."pending_id"
FROM "bundles"
WHERE (("bundles"."pending_id" = $1)
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = ANY($2)))) OFFSET $3)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $4)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != ALL($5))) OFFSET $6))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $7)))));
-- binds: ["<pending_id>", ["", "pending"], 0, 1, ["completed", "failed", "cancelled"], 0, 0]
