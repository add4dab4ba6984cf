SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at"
FROM "bundles"
WHERE ((("bundles"."created_at" >= $1)
AND (("bundles"."created_at" > $2)
OR ("bundles"."pending_id" > $3)))
AND ((((("bundles"."may_be_active"
AND (($4
OR (((("bundles"."owner_key" = $5)
OR ("bundles"."owner_key" = $6))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $7)) OFFSET $8))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $9))
AND ("escalation_grants"."visible_from" <= $10)) OFFSET $11)
AND ((("bundles"."owner_key" || $12)) IS NOT NULL))))
AND ($13
OR (("bundles"."kind" != $14)
AND ("bundles"."human_only" = $15)))))
AND ($16
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $17)) OFFSET $18)))
AND ((("bundles"."owner_key" || $19)) IS NOT NULL))
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $20))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $21))
OR ("bundle_questions"."status" = $22))) OFFSET $23)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $24)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $25))
AND ("sessions"."state" != $26))
AND ("sessions"."state" != $27)) OFFSET $28))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $29)))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $30)) OFFSET $31))))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $32;
-- binds: [0, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0, 51]
