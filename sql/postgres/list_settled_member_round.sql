SELECT 0 AS arm, walk.*
FROM (SELECT "bundles"."responded_at", "bundles"."pending_id"
FROM "bundles"
WHERE ((("bundles"."responded_at" IS NOT NULL)
AND ("bundles"."responded_at", "bundles"."pending_id") < ($1, $2))
AND ("bundles"."owner_key" = $3))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $4) AS walk UNION ALL SELECT 1 AS arm, walk.*
FROM (SELECT "bundles"."responded_at", "bundles"."pending_id"
FROM "bundles"
WHERE ((("bundles"."responded_at" IS NOT NULL)
AND ("bundles"."responded_at", "bundles"."pending_id") < ($5, $6))
AND ("bundles"."owner_key" = $7))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $8) AS walk UNION ALL SELECT 2 AS arm, walk.*
FROM (SELECT "bundles"."responded_at", "bundles"."pending_id"
FROM "bundles"
WHERE ((("bundles"."responded_at" IS NOT NULL)
AND ("bundles"."responded_at", "bundles"."pending_id") < ($9, $10))
AND ("bundles"."workspace_key" = $11))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $12) AS walk UNION ALL SELECT 3 AS arm, walk.*
FROM (SELECT "bundles"."responded_at", "bundles"."pending_id"
FROM "bundles"
WHERE ((("bundles"."responded_at" IS NOT NULL)
AND ("bundles"."responded_at", "bundles"."pending_id") < ($13, $14))
AND ("bundles"."pending_id" = ANY(SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE (("escalation_grants"."user_id" = $15)
AND ("escalation_grants"."visible_from" <= $16)))))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $17) AS walk;
-- binds: [0, "<pending_id>", "", 2, 0, "<pending_id>", "<owner_key>", 2, 0, "<pending_id>", "<workspace_key>", 2, 0, "<pending_id>", "<user_id>", 1000000, 2]
