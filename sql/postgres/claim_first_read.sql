SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at", "claim_rows"."id", "claim_rows"."pending_id", "claim_rows"."question_id", "claim_rows"."question_index", "claim_rows"."payload", "claim_rows"."status", "claim_rows"."response", "claim_rows"."created_at"
FROM ("bundles" LEFT OUTER JOIN "bundle_questions" AS "claim_rows" ON ("claim_rows"."pending_id" = "bundles"."pending_id"))
WHERE (("bundles"."pending_id" = $1)
AND (($2
OR (((("bundles"."owner_key" = $3)
OR ("bundles"."owner_key" = $4))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $5)) OFFSET $6))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $7))
AND ("escalation_grants"."visible_from" <= $8)) OFFSET $9)
AND ((("bundles"."owner_key" || $10)) IS NOT NULL))))
AND ($11
OR (("bundles"."kind" != $12)
AND ("bundles"."human_only" = $13)))));
-- binds: ["<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false]
