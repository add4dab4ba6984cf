UPDATE `bundles`
SET `reject_reason` = ?, `responded_at` = ?, `resolved_by_kind` = ?, `resolved_by_id` = ?, `voters` = ?, `response_delivery_pending` = ?, `may_be_active` = ?
WHERE (`bundles`.`pending_id` = ?);
-- binds: ["<reject_reason>", 0, "<kind>", "<id>", "<voters>", true, false, "<pending_id>"]
