SELECT COUNT(*), min("bundles"."created_at")
FROM "bundles"
WHERE ((((("bundles"."may_be_active"
AND (($1
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $2)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $3)) END)
AND (("tasks"."workspace_id" = $4)
OR  NOT (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE ((("workspaces"."id" = "tasks"."workspace_id")
AND ("workspaces"."owner_id" != $5))
AND ("workspaces"."owner_id" != $6)) OFFSET $7)))) OFFSET $8))
AND ($9
OR ("bundles"."kind" != $10))))
AND ($11
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $12)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $13)) END)
AND ("tasks"."workspace_id" = $14)) OFFSET $15)))
AND EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $16)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $17)) END) OFFSET $18))
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
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $27))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $28)) OFFSET $29)));
-- binds: [false, "", 1, "", "", "<user_id>", 0, 0, false, "permission", true, "", 1, "", 0, "", 1, 0, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 0]
