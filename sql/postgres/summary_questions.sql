SELECT COUNT(*)
FROM "bundle_questions" AS "counted_rows"
WHERE (((("counted_rows"."status" IS NULL)
OR ("counted_rows"."status" = $1))
OR ("counted_rows"."status" = $2))
AND ("counted_rows"."pending_id" = ANY(SELECT "bundles"."pending_id"
FROM "bundles"
WHERE ((((("bundles"."may_be_active"
AND (($3
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $4)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $5)) END)
AND (("tasks"."workspace_id" = $6)
OR  NOT (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE ((("workspaces"."id" = "tasks"."workspace_id")
AND ("workspaces"."owner_id" != $7))
AND ("workspaces"."owner_id" != $8)) OFFSET $9)))) OFFSET $10))
AND ($11
OR ("bundles"."kind" != $12))))
AND ($13
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $14)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $15)) END)
AND ("tasks"."workspace_id" = $16)) OFFSET $17)))
AND EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $18)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $19)) END) OFFSET $20))
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
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $29))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $30)) OFFSET $31))))));
-- binds: ["", "pending", false, "", 1, "", "", "<user_id>", 0, 0, false, "permission", true, "", 1, "", 0, "", 1, 0, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0]
