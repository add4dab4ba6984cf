SELECT COUNT(*)
FROM "bundle_questions" AS "counted_rows"
WHERE ((("counted_rows"."status" IS NULL)
OR ("counted_rows"."status" = ANY($1)))
AND ("counted_rows"."pending_id" = ANY(SELECT "bundles"."pending_id"
FROM "bundles"
WHERE ((((("bundles"."may_be_active"
AND (($2
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $3)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $4)) END)
AND (("tasks"."workspace_id" = $5)
OR  NOT (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE ((("workspaces"."id" = "tasks"."workspace_id")
AND ("workspaces"."owner_id" != $6))
AND ("workspaces"."owner_id" != $7)) OFFSET $8)))) OFFSET $9))
AND ($10
OR ("bundles"."kind" != $11))))
AND ($12
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $13)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $14)) END)
AND ("tasks"."workspace_id" = $15)) OFFSET $16)))
AND EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $17)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $18)) END) OFFSET $19))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = ANY($20)))) OFFSET $21)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $22)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != ALL($23))) OFFSET $24))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $25))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $26)) OFFSET $27))))));
-- binds: [["", "pending"], false, "", 1, "", "", "<user_id>", 0, 0, false, "permission", true, "", 1, "", 0, "", 1, 0, ["", "pending"], 0, 1, ["completed", "failed", "cancelled"], 0, 0, "", 0]
