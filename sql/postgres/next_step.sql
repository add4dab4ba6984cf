SELECT min("bundles"."next_step_at")
FROM "bundles"
WHERE (("bundles"."next_step_at" IS NOT NULL)
AND ("bundles"."next_step_at" > $1));
-- binds: [1000000]
