UPDATE "bundle_questions"
SET "status" = $1, "expired_at" = $2
WHERE (("bundle_questions"."pending_id" = ANY($3))
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $4))
OR ("bundle_questions"."status" = $5)));
-- binds: ["expired", Some(0), ["<pending_id>"], "", "pending"]
