UPDATE "bundle_questions"
SET "status" = $1, "response" = $2
WHERE (("bundle_questions"."id" = $3)
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $4))
OR ("bundle_questions"."status" = $5)));
-- binds: ["<status>", Some("<answer>"), 1, "", "pending"]
