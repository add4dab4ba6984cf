SELECT 0 AS arm, walk.*
FROM (SELECT "bundles"."created_at", "bundles"."pending_id"
FROM "bundles"
WHERE ((("bundles"."may_be_active"
AND ("bundles"."created_at" >= $1))
AND (("bundles"."created_at" > $2)
OR ("bundles"."pending_id" > $3)))
AND ("bundles"."owner_key" = $4))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $5) AS walk UNION ALL SELECT 1 AS arm, walk.*
FROM (SELECT "bundles"."created_at", "bundles"."pending_id"
FROM "bundles"
WHERE ((("bundles"."may_be_active"
AND ("bundles"."created_at" >= $6))
AND (("bundles"."created_at" > $7)
OR ("bundles"."pending_id" > $8)))
AND ("bundles"."owner_key" = $9))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $10) AS walk UNION ALL SELECT 2 AS arm, walk.*
FROM (SELECT "bundles"."created_at", "bundles"."pending_id"
FROM "bundles"
WHERE ((("bundles"."may_be_active"
AND ("bundles"."created_at" >= $11))
AND (("bundles"."created_at" > $12)
OR ("bundles"."pending_id" > $13)))
AND ("bundles"."workspace_key" = $14))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $15) AS walk UNION ALL SELECT 3 AS arm, walk.*
FROM (SELECT "bundles"."created_at", "bundles"."pending_id"
FROM "bundles"
WHERE ((("bundles"."may_be_active"
AND ("bundles"."created_at" >= $16))
AND (("bundles"."created_at" > $17)
OR ("bundles"."pending_id" > $18)))
AND ("bundles"."pending_id" = ANY(SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE (("escalation_grants"."user_id" = $19)
AND ("escalation_grants"."visible_from" <= $20)))))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $21) AS walk;
-- binds: [0, 0, "<pending_id>", "", 2, 0, 0, "<pending_id>", "<owner_key>", 2, 0, 0, "<pending_id>", "<workspace_key>", 2, 0, 0, "<pending_id>", "<user_id>", 1000000, 2]
