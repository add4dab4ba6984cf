SELECT "bundles"."pending_id"
FROM "bundles"
WHERE ("bundles"."response_delivery_pending"
AND "bundles"."agent_disconnected")
ORDER BY "bundles"."responded_at" ASC, "bundles"."pending_id" ASC
LIMIT $1;
-- binds: [50]
