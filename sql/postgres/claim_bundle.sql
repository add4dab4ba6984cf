UPDATE "bundles"
SET "reject_reason" = $1, "responded_at" = $2, "resolved_by_kind" = $3, "resolved_by_id" = $4, "response_delivery_pending" = $5, "may_be_active" = $6
WHERE ("bundles"."pending_id" = $7);
-- binds: ["<reject_reason>", 0, "<kind>", "<id>", true, false, "<pending_id>"]
