SELECT 0 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($1, $2)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($3
OR (((("bundles"."owner_key" = $4)
OR ("bundles"."owner_key" = $5))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $6)) OFFSET $7))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $8))
AND ("escalation_grants"."visible_from" <= $9)) OFFSET $10)
AND ((("bundles"."owner_key" || $11)) IS NOT NULL))))
AND ($12
OR (("bundles"."kind" != $13)
AND ("bundles"."human_only" = $14)))))
AND ($15
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $16)) OFFSET $17)))
AND ((("bundles"."owner_key" || $18)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $19)
OR ("bundle_questions"."status" = $20))
OR ("bundle_questions"."status" = $21))) OFFSET $22))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $23))
OR ("bundle_questions"."status" = $24))) OFFSET $25))))
AND ("bundles"."owner_key" = $26))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $27) AS walk UNION ALL SELECT 1 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($28, $29)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($30
OR (((("bundles"."owner_key" = $31)
OR ("bundles"."owner_key" = $32))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $33)) OFFSET $34))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $35))
AND ("escalation_grants"."visible_from" <= $36)) OFFSET $37)
AND ((("bundles"."owner_key" || $38)) IS NOT NULL))))
AND ($39
OR (("bundles"."kind" != $40)
AND ("bundles"."human_only" = $41)))))
AND ($42
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $43)) OFFSET $44)))
AND ((("bundles"."owner_key" || $45)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $46)
OR ("bundle_questions"."status" = $47))
OR ("bundle_questions"."status" = $48))) OFFSET $49))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $50))
OR ("bundle_questions"."status" = $51))) OFFSET $52))))
AND ("bundles"."owner_key" = $53))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $54) AS walk UNION ALL SELECT 2 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($55, $56)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($57
OR (((("bundles"."owner_key" = $58)
OR ("bundles"."owner_key" = $59))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $60)) OFFSET $61))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $62))
AND ("escalation_grants"."visible_from" <= $63)) OFFSET $64)
AND ((("bundles"."owner_key" || $65)) IS NOT NULL))))
AND ($66
OR (("bundles"."kind" != $67)
AND ("bundles"."human_only" = $68)))))
AND ($69
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $70)) OFFSET $71)))
AND ((("bundles"."owner_key" || $72)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $73)
OR ("bundle_questions"."status" = $74))
OR ("bundle_questions"."status" = $75))) OFFSET $76))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $77))
OR ("bundle_questions"."status" = $78))) OFFSET $79))))
AND ("bundles"."workspace_key" = $80))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $81) AS walk UNION ALL SELECT 3 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response", "bundles"."human_only", "bundles"."quorum_approvals", "bundles"."quorum_rejections", "bundles"."quorum_requested_by", "bundles"."voters", "bundles"."reminders", "bundles"."escalate_at", "bundles"."stepped_at"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($82, $83)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($84
OR (((("bundles"."owner_key" = $85)
OR ("bundles"."owner_key" = $86))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $87)) OFFSET $88))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $89))
AND ("escalation_grants"."visible_from" <= $90)) OFFSET $91)
AND ((("bundles"."owner_key" || $92)) IS NOT NULL))))
AND ($93
OR (("bundles"."kind" != $94)
AND ("bundles"."human_only" = $95)))))
AND ($96
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $97)) OFFSET $98)))
AND ((("bundles"."owner_key" || $99)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $100)
OR ("bundle_questions"."status" = $101))
OR ("bundle_questions"."status" = $102))) OFFSET $103))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $104))
OR ("bundle_questions"."status" = $105))) OFFSET $106))))
AND ("bundles"."pending_id" = ANY(SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE (("escalation_grants"."user_id" = $107)
AND ("escalation_grants"."visible_from" <= $108)))))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $109) AS walk;
-- binds: [0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<owner_key>", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<workspace_key>", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<user_id>", 1000000, 2]
