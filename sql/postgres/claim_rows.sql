UPDATE "bundle_questions"
SET "status" = $1
WHERE (("bundle_questions"."pending_id" = $2)
AND (("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = ANY($3))));
-- binds: ["<status>", "<pending_id>", ["", "pending"]]
