SELECT 0 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."access_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($1, $2)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($3
OR ((("bundles"."access_key" = $4)
OR (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE (("workspaces"."id" = "bundles"."access_key")
AND ("workspaces"."owner_id" = $5)) OFFSET $6)
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."access_key")
AND ("workspace_members"."user_id" = $7)) OFFSET $8)))
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
AND ((("bundles"."access_key" || $17)) IS NOT NULL))
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
AND ("bundles"."access_key" = $25))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $26) AS walk UNION ALL SELECT 1 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."access_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($27, $28)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($29
OR ((("bundles"."access_key" = $30)
OR (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE (("workspaces"."id" = "bundles"."access_key")
AND ("workspaces"."owner_id" = $31)) OFFSET $32)
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."access_key")
AND ("workspace_members"."user_id" = $33)) OFFSET $34)))
OR EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $35))
AND ("escalation_grants"."visible_from" <= $36)) OFFSET $37)))
AND ($38
OR ("bundles"."kind" != $39))))
AND ($40
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $41)) OFFSET $42)))
AND ((("bundles"."access_key" || $43)) IS NOT NULL))
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
AND ("bundles"."access_key" = $51))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $52) AS walk UNION ALL SELECT 2 AS arm, walk.*
FROM (SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", CASE WHEN (("bundles"."access_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."resolved_by_kind", "bundles"."resolved_by_id", "bundles"."expires_at", "bundles"."on_expire", "bundles"."default_response"
FROM "bundles"
WHERE ((("bundles"."responded_at", "bundles"."pending_id") < ($53, $54)
AND (((((("bundles"."responded_at" IS NOT NULL)
AND (($55
OR ((("bundles"."access_key" = $56)
OR (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE (("workspaces"."id" = "bundles"."access_key")
AND ("workspaces"."owner_id" = $57)) OFFSET $58)
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."access_key")
AND ("workspace_members"."user_id" = $59)) OFFSET $60)))
OR EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $61))
AND ("escalation_grants"."visible_from" <= $62)) OFFSET $63)))
AND ($64
OR ("bundles"."kind" != $65))))
AND ($66
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = "bundles"."task_key")
AND ("tasks"."workspace_id" = $67)) OFFSET $68)))
AND ((("bundles"."access_key" || $69)) IS NOT NULL))
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
AND ("bundles"."pending_id" = ANY(SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE (("escalation_grants"."user_id" = $77)
AND ("escalation_grants"."visible_from" <= $78)))))
ORDER BY "bundles"."responded_at" DESC, "bundles"."pending_id" DESC
LIMIT $79) AS walk;
-- binds: [0, "<pending_id>", false, "", "<user_id>", 0, "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "", 2, 0, "<pending_id>", false, "", "<user_id>", 0, "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<access_key>", 2, 0, "<pending_id>", false, "", "<user_id>", 0, "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<user_id>", 1000000, 2]
