UPDATE "bundle_questions"
SET "status" = $1
WHERE (("bundle_questions"."pending_id" = ANY($2))
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $3))
OR ("bundle_questions"."status" = $4)));
-- binds: ["expired", ["<pending_id>"], "", "pending"]
