SELECT 0 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at"
FROM "bundles"
WHERE (((("bundles"."created_at" >= $1)
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
AND ("bundles"."owner_key" = $32))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $33) AS walk UNION ALL SELECT 1 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at"
FROM "bundles"
WHERE (((("bundles"."created_at" >= $34)
AND (("bundles"."created_at" > $35)
OR ("bundles"."pending_id" > $36)))
AND ((((("bundles"."may_be_active"
AND (($37
OR (((("bundles"."owner_key" = $38)
OR ("bundles"."owner_key" = $39))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $40)) OFFSET $41))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $42))
AND ("escalation_grants"."visible_from" <= $43)) OFFSET $44)
AND ((("bundles"."owner_key" || $45)) IS NOT NULL))))
AND ($46
OR (("bundles"."kind" != $47)
AND ("bundles"."human_only" = $48)))))
AND ($49
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $50)) OFFSET $51)))
AND ((("bundles"."owner_key" || $52)) IS NOT NULL))
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $53))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $54))
OR ("bundle_questions"."status" = $55))) OFFSET $56)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $57)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $58))
AND ("sessions"."state" != $59))
AND ("sessions"."state" != $60)) OFFSET $61))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $62)))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $63)) OFFSET $64))))
AND ("bundles"."owner_key" = $65))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $66) AS walk UNION ALL SELECT 2 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at"
FROM "bundles"
WHERE (((("bundles"."created_at" >= $67)
AND (("bundles"."created_at" > $68)
OR ("bundles"."pending_id" > $69)))
AND ((((("bundles"."may_be_active"
AND (($70
OR (((("bundles"."owner_key" = $71)
OR ("bundles"."owner_key" = $72))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $73)) OFFSET $74))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $75))
AND ("escalation_grants"."visible_from" <= $76)) OFFSET $77)
AND ((("bundles"."owner_key" || $78)) IS NOT NULL))))
AND ($79
OR (("bundles"."kind" != $80)
AND ("bundles"."human_only" = $81)))))
AND ($82
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $83)) OFFSET $84)))
AND ((("bundles"."owner_key" || $85)) IS NOT NULL))
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $86))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $87))
OR ("bundle_questions"."status" = $88))) OFFSET $89)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $90)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $91))
AND ("sessions"."state" != $92))
AND ("sessions"."state" != $93)) OFFSET $94))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $95)))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $96)) OFFSET $97))))
AND ("bundles"."workspace_key" = $98))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $99) AS walk UNION ALL SELECT 3 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at"
FROM "bundles"
WHERE (((("bundles"."created_at" >= $100)
AND (("bundles"."created_at" > $101)
OR ("bundles"."pending_id" > $102)))
AND ((((("bundles"."may_be_active"
AND (($103
OR (((("bundles"."owner_key" = $104)
OR ("bundles"."owner_key" = $105))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $106)) OFFSET $107))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $108))
AND ("escalation_grants"."visible_from" <= $109)) OFFSET $110)
AND ((("bundles"."owner_key" || $111)) IS NOT NULL))))
AND ($112
OR (("bundles"."kind" != $113)
AND ("bundles"."human_only" = $114)))))
AND ($115
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $116)) OFFSET $117)))
AND ((("bundles"."owner_key" || $118)) IS NOT NULL))
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $119))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $120))
OR ("bundle_questions"."status" = $121))) OFFSET $122)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $123)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $124))
AND ("sessions"."state" != $125))
AND ("sessions"."state" != $126)) OFFSET $127))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $128)))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $129)) OFFSET $130))))
AND ("bundles"."pending_id" = ANY(SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE (("escalation_grants"."user_id" = $131)
AND ("escalation_grants"."visible_from" <= $132)))))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $133) AS walk;
-- binds: [0, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0, "", 2, 0, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0, "<owner_key>", 2, 0, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0, "<workspace_key>", 2, 0, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0, "<user_id>", 1000000, 2]
