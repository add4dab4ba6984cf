SELECT EXISTS (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."task_id", "bundles"."turn_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."idempotency_key", "bundles"."may_be_active", "bundles"."agent_disconnected", "bundles"."response_delivery_pending", "bundles"."reject_reason", "bundles"."responded_at", "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."delivery_lease_until", "bundles"."task_key", "bundles"."owner_key", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."workspace_key", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at", "bundles"."next_step_at"
FROM "bundles"
WHERE (("bundles"."session_id" = $1)
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $2))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $3))
OR ("bundle_questions"."status" = $4))) OFFSET $5)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $6)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $7))
AND ("sessions"."state" != $8))
AND ("sessions"."state" != $9)) OFFSET $10))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $11))))));
-- binds: ["<session_id>", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0]
