SELECT COUNT(*)
FROM "bundle_questions" AS "counted_rows"
WHERE ((("counted_rows"."status" IS NULL)
OR ("counted_rows"."status" = ANY($1)))
AND ("counted_rows"."pending_id" = ANY(SELECT "bundles"."pending_id"
FROM "bundles"
WHERE ((((("bundles"."may_be_active"
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = ANY($2)))) OFFSET $3)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $4)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != ALL($5))) OFFSET $6))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $7))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $8)) OFFSET $9)))
AND EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $10)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $11)) END) OFFSET $12))
AND (($13
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $14)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $15)) END)
AND (("tasks"."workspace_id" = $16)
OR  NOT (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE ((("workspaces"."id" = "tasks"."workspace_id")
AND ("workspaces"."owner_id" != $17))
AND ("workspaces"."owner_id" != $18)) OFFSET $19)))) OFFSET $20))
AND ($21
OR ("bundles"."kind" != $22))))
AND ($23
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $24)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $25)) END)
AND ("tasks"."workspace_id" = $26)) OFFSET $27))))));
-- binds: [["", "pending"], ["", "pending"], 0, 1, ["completed", "failed", "cancelled"], 0, 0, "", 0, "", 1, 0, false, "", 1, "", "", "<user_id>", 0, 0, false, "permission", true, "", 1, "", 0]
