SELECT COUNT(*), min("bundles"."created_at")
FROM "bundles"
WHERE ((((("bundles"."may_be_active"
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = ANY($1)))) OFFSET $2)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $3)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != ALL($4))) OFFSET $5))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $6))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $7)) OFFSET $8)))
AND EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $9)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $10)) END) OFFSET $11))
AND (($12
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $13)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $14)) END)
AND (("tasks"."workspace_id" = $15)
OR  NOT (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE ((("workspaces"."id" = "tasks"."workspace_id")
AND ("workspaces"."owner_id" != $16))
AND ("workspaces"."owner_id" != $17)) OFFSET $18)))) OFFSET $19))
AND ($20
OR ("bundles"."kind" != $21))))
AND ($22
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $23)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $24)) END)
AND ("tasks"."workspace_id" = $25)) OFFSET $26)));
-- binds: [["", "pending"], 0, 1, ["completed", "failed", "cancelled"], 0, 0, "", 0, "", 1, 0, false, "", 1, "", "", "<user_id>", 0, 0, false, "permission", true, "", 1, "", 0]
