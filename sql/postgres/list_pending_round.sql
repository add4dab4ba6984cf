SELECT 0 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
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
OR EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $9))
AND ("escalation_grants"."visible_from" <= $10)) OFFSET $11)))
AND ($12
OR ("bundles"."kind" != $13))))
AND ($14
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $15)) OFFSET $16)))
AND ((("bundles"."owner_key" || $17)) IS NOT NULL))
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $18))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $19))
OR ("bundle_questions"."status" = $20))) OFFSET $21)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $22)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $23))
AND ("sessions"."state" != $24))
AND ("sessions"."state" != $25)) OFFSET $26))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $27)))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $28)) OFFSET $29))))
AND ("bundles"."owner_key" = $30))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $31) AS walk UNION ALL SELECT 1 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE (((("bundles"."created_at" >= $32)
AND (("bundles"."created_at" > $33)
OR ("bundles"."pending_id" > $34)))
AND ((((("bundles"."may_be_active"
AND (($35
OR (((("bundles"."owner_key" = $36)
OR ("bundles"."owner_key" = $37))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $38)) OFFSET $39))
OR EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $40))
AND ("escalation_grants"."visible_from" <= $41)) OFFSET $42)))
AND ($43
OR ("bundles"."kind" != $44))))
AND ($45
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $46)) OFFSET $47)))
AND ((("bundles"."owner_key" || $48)) IS NOT NULL))
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $49))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $50))
OR ("bundle_questions"."status" = $51))) OFFSET $52)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $53)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $54))
AND ("sessions"."state" != $55))
AND ("sessions"."state" != $56)) OFFSET $57))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $58)))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $59)) OFFSET $60))))
AND ("bundles"."owner_key" = $61))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $62) AS walk UNION ALL SELECT 2 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE (((("bundles"."created_at" >= $63)
AND (("bundles"."created_at" > $64)
OR ("bundles"."pending_id" > $65)))
AND ((((("bundles"."may_be_active"
AND (($66
OR (((("bundles"."owner_key" = $67)
OR ("bundles"."owner_key" = $68))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $69)) OFFSET $70))
OR EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $71))
AND ("escalation_grants"."visible_from" <= $72)) OFFSET $73)))
AND ($74
OR ("bundles"."kind" != $75))))
AND ($76
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $77)) OFFSET $78)))
AND ((("bundles"."owner_key" || $79)) IS NOT NULL))
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $80))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $81))
OR ("bundle_questions"."status" = $82))) OFFSET $83)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $84)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $85))
AND ("sessions"."state" != $86))
AND ("sessions"."state" != $87)) OFFSET $88))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $89)))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $90)) OFFSET $91))))
AND ("bundles"."workspace_key" = $92))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $93) AS walk UNION ALL SELECT 3 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE (((("bundles"."created_at" >= $94)
AND (("bundles"."created_at" > $95)
OR ("bundles"."pending_id" > $96)))
AND ((((("bundles"."may_be_active"
AND (($97
OR (((("bundles"."owner_key" = $98)
OR ("bundles"."owner_key" = $99))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $100)) OFFSET $101))
OR EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $102))
AND ("escalation_grants"."visible_from" <= $103)) OFFSET $104)))
AND ($105
OR ("bundles"."kind" != $106))))
AND ($107
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $108)) OFFSET $109)))
AND ((("bundles"."owner_key" || $110)) IS NOT NULL))
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $111))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $112))
OR ("bundle_questions"."status" = $113))) OFFSET $114)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $115)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $116))
AND ("sessions"."state" != $117))
AND ("sessions"."state" != $118)) OFFSET $119))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $120)))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $121)) OFFSET $122))))
AND ("bundles"."pending_id" = ANY(SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE (("escalation_grants"."user_id" = $123)
AND ("escalation_grants"."visible_from" <= $124)))))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $125) AS walk;
-- binds: [0, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, "<workspace_id>", 0, "", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0, "", 2, 0, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, "<workspace_id>", 0, "", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0, "<owner_key>", 2, 0, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, "<workspace_id>", 0, "", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0, "<workspace_key>", 2, 0, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, "<workspace_id>", 0, "", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0, "<user_id>", 1000000, 2]
