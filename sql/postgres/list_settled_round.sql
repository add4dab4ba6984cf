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
OR EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $8))
AND ("escalation_grants"."visible_from" <= $9)) OFFSET $10)))
AND ($11
OR ("bundles"."kind" != $12))))
AND ($13
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $14)) OFFSET $15)))
AND ((("bundles"."owner_key" || $16)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $17)
OR ("bundle_questions"."status" = $18))
OR ("bundle_questions"."status" = $19))) OFFSET $20))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $21))
OR ("bundle_questions"."status" = $22))) OFFSET $23))))
AND ("bundles"."owner_key" = $24))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $25) AS walk UNION ALL SELECT 1 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($26, $27)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($28
OR (((("bundles"."owner_key" = $29)
OR ("bundles"."owner_key" = $30))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $31)) OFFSET $32))
OR EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $33))
AND ("escalation_grants"."visible_from" <= $34)) OFFSET $35)))
AND ($36
OR ("bundles"."kind" != $37))))
AND ($38
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $39)) OFFSET $40)))
AND ((("bundles"."owner_key" || $41)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $42)
OR ("bundle_questions"."status" = $43))
OR ("bundle_questions"."status" = $44))) OFFSET $45))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $46))
OR ("bundle_questions"."status" = $47))) OFFSET $48))))
AND ("bundles"."owner_key" = $49))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $50) AS walk UNION ALL SELECT 2 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($51, $52)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($53
OR (((("bundles"."owner_key" = $54)
OR ("bundles"."owner_key" = $55))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $56)) OFFSET $57))
OR EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $58))
AND ("escalation_grants"."visible_from" <= $59)) OFFSET $60)))
AND ($61
OR ("bundles"."kind" != $62))))
AND ($63
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $64)) OFFSET $65)))
AND ((("bundles"."owner_key" || $66)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $67)
OR ("bundle_questions"."status" = $68))
OR ("bundle_questions"."status" = $69))) OFFSET $70))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $71))
OR ("bundle_questions"."status" = $72))) OFFSET $73))))
AND ("bundles"."workspace_key" = $74))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $75) AS walk UNION ALL SELECT 3 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($76, $77)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($78
OR (((("bundles"."owner_key" = $79)
OR ("bundles"."owner_key" = $80))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $81)) OFFSET $82))
OR EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $83))
AND ("escalation_grants"."visible_from" <= $84)) OFFSET $85)))
AND ($86
OR ("bundles"."kind" != $87))))
AND ($88
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $89)) OFFSET $90)))
AND ((("bundles"."owner_key" || $91)) IS NOT NULL))
AND EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" = $92)
OR ("bundle_questions"."status" = $93))
OR ("bundle_questions"."status" = $94))) OFFSET $95))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $96))
OR ("bundle_questions"."status" = $97))) OFFSET $98))))
AND ("bundles"."pending_id" = ANY(SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE (("escalation_grants"."user_id" = $99)
AND ("escalation_grants"."visible_from" <= $100)))))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $101) AS walk;
-- binds: [0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<owner_key>", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<workspace_key>", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<user_id>", 1000000, 2]
