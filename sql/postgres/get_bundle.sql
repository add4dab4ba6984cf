SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at", ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $1))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $2))
OR ("bundle_questions"."status" = $3))) OFFSET $4)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $5)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $6))
AND ("sessions"."state" != $7))
AND ("sessions"."state" != $8)) OFFSET $9))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $10)))), ((("bundles"."expires_at" IS NOT NULL)
AND ("bundles"."expires_at" <= $11))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $12))
OR ("bundle_questions"."status" = $13))) OFFSET $14)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $15)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $16))
AND ("sessions"."state" != $17))
AND ("sessions"."state" != $18)) OFFSET $19))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $20)))), ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $21)), "bundles"."agent_disconnected", (SELECT "tasks"."title"
FROM "tasks"
WHERE ("tasks"."id" = "bundles"."task_key")
LIMIT $22), (SELECT "tasks"."workspace_id"
FROM "tasks"
WHERE ("tasks"."id" = "bundles"."task_key")
LIMIT $23), (SELECT "workspaces"."name"
FROM "workspaces"
WHERE ("workspaces"."id" = (SELECT "tasks"."workspace_id"
FROM "tasks"
WHERE ("tasks"."id" = "bundles"."task_key")
LIMIT $24))
LIMIT $25), "detail_rows"."id", "detail_rows"."pending_id", "detail_rows"."question_id", "detail_rows"."question_index", "detail_rows"."payload", "detail_rows"."status", "detail_rows"."response", "detail_rows"."created_at"
FROM ("bundles" LEFT OUTER JOIN "bundle_questions" AS "detail_rows" ON ("detail_rows"."pending_id" = "bundles"."pending_id"))
WHERE (("bundles"."pending_id" = $26)
AND (($27
OR (((("bundles"."owner_key" = $28)
OR ("bundles"."owner_key" = $29))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $30)) OFFSET $31))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $32))
AND ("escalation_grants"."visible_from" <= $33)) OFFSET $34)
AND ((("bundles"."owner_key" || $35)) IS NOT NULL))))
AND ($36
OR (("bundles"."kind" != $37)
AND ("bundles"."human_only" = $38)))));
-- binds: [1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, 1, 1, 1, 1, 1, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false]
