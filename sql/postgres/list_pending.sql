SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", (SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $1)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $2)) END)
LIMIT $3), (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = ANY($4)))) OFFSET $5)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $6)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != ALL($7))) OFFSET $8))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $9))), ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $10))
FROM "bundles"
WHERE ((("bundles"."created_at" >= $11)
AND (("bundles"."created_at" > $12)
OR ("bundles"."pending_id" > $13)))
AND ((((("bundles"."may_be_active"
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = ANY($14)))) OFFSET $15)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $16)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != ALL($17))) OFFSET $18))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $19))))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ("bundle_questions"."question_id" = $20)) OFFSET $21)))
AND EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $22)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $23)) END) OFFSET $24))
AND (($25
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $26)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $27)) END)
AND (("tasks"."workspace_id" = $28)
OR  NOT (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE ((("workspaces"."id" = "tasks"."workspace_id")
AND ("workspaces"."owner_id" != $29))
AND ("workspaces"."owner_id" != $30)) OFFSET $31)))) OFFSET $32))
AND ($33
OR ("bundles"."kind" != $34))))
AND ($35
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $36)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $37)) END)
AND ("tasks"."workspace_id" = $38)) OFFSET $39))))
ORDER BY "bundles"."created_at" ASC, "bundles"."pending_id" ASC
LIMIT $40;
-- binds: ["", 1, 1, ["", "pending"], 0, 1, ["completed", "failed", "cancelled"], 0, 0, 1, 0, 0, "<pending_id>", ["", "pending"], 0, 1, ["completed", "failed", "cancelled"], 0, 0, "", 0, "", 1, 0, false, "", 1, "", "", "<user_id>", 0, 0, false, "permission", false, "", 1, "<workspace_id>", 0, 51]
