SELECT 0 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
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
OR ("bundles"."kind" != $13))))
AND ($14
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $15)) OFFSET $16)))
AND ((("bundles"."owner_key" || $17)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $18)
OR ("bundle_questions"."status" = $19))
OR ("bundle_questions"."status" = $20))) OFFSET $21))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $22))
OR ("bundle_questions"."status" = $23))) OFFSET $24))))
AND ("bundles"."owner_key" = $25))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $26) AS walk UNION ALL SELECT 1 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($27, $28)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($29
OR (((("bundles"."owner_key" = $30)
OR ("bundles"."owner_key" = $31))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $32)) OFFSET $33))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $34))
AND ("escalation_grants"."visible_from" <= $35)) OFFSET $36)
AND ((("bundles"."owner_key" || $37)) IS NOT NULL))))
AND ($38
OR ("bundles"."kind" != $39))))
AND ($40
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $41)) OFFSET $42)))
AND ((("bundles"."owner_key" || $43)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $44)
OR ("bundle_questions"."status" = $45))
OR ("bundle_questions"."status" = $46))) OFFSET $47))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $48))
OR ("bundle_questions"."status" = $49))) OFFSET $50))))
AND ("bundles"."owner_key" = $51))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $52) AS walk UNION ALL SELECT 2 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($53, $54)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($55
OR (((("bundles"."owner_key" = $56)
OR ("bundles"."owner_key" = $57))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $58)) OFFSET $59))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $60))
AND ("escalation_grants"."visible_from" <= $61)) OFFSET $62)
AND ((("bundles"."owner_key" || $63)) IS NOT NULL))))
AND ($64
OR ("bundles"."kind" != $65))))
AND ($66
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $67)) OFFSET $68)))
AND ((("bundles"."owner_key" || $69)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $70)
OR ("bundle_questions"."status" = $71))
OR ("bundle_questions"."status" = $72))) OFFSET $73))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $74))
OR ("bundle_questions"."status" = $75))) OFFSET $76))))
AND ("bundles"."workspace_key" = $77))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $78) AS walk UNION ALL SELECT 3 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($79, $80)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($81
OR (((("bundles"."owner_key" = $82)
OR ("bundles"."owner_key" = $83))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $84)) OFFSET $85))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $86))
AND ("escalation_grants"."visible_from" <= $87)) OFFSET $88)
AND ((("bundles"."owner_key" || $89)) IS NOT NULL))))
AND ($90
OR ("bundles"."kind" != $91))))
AND ($92
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $93)) OFFSET $94)))
AND ((("bundles"."owner_key" || $95)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $96)
OR ("bundle_questions"."status" = $97))
OR ("bundle_questions"."status" = $98))) OFFSET $99))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $100))
OR ("bundle_questions"."status" = $101))) OFFSET $102))))
AND ("bundles"."pending_id" = ANY(SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE (("escalation_grants"."user_id" = $103)
AND ("escalation_grants"."visible_from" <= $104)))))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $105) AS walk;
-- binds: [0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<owner_key>", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<workspace_key>", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<user_id>", 1000000, 2]
