SELECT min("bundles"."expires_at")
FROM "bundles"
WHERE (("bundles"."may_be_active"
AND ("bundles"."expires_at" IS NOT NULL))
AND ("bundles"."expires_at" > $1));
-- binds: [1000000]
