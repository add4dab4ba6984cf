SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", (SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $1)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $2)) END)
LIMIT $3), CASE WHEN ((((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $4))
OR ("bundle_questions"."status" = $5))) OFFSET $6)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $7)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $8))
AND ("sessions"."state" != $9))
AND ("sessions"."state" != $10)) OFFSET $11))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $12)))) THEN (EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id") FOR SHARE)) END, "claim_rows"."id", "claim_rows"."pending_id", "claim_rows"."question_id", "claim_rows"."question_index", "claim_rows"."payload", "claim_rows"."status", "claim_rows"."response", "claim_rows"."created_at"
FROM ("bundles" LEFT OUTER JOIN "bundle_questions" AS "claim_rows" ON ("claim_rows"."pending_id" = "bundles"."pending_id"))
WHERE (("bundles"."pending_id" = $13)
AND (($14
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $15)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $16)) END)
AND (("tasks"."workspace_id" = $17)
OR  NOT (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE ((("workspaces"."id" = "tasks"."workspace_id")
AND ("workspaces"."owner_id" != $18))
AND ("workspaces"."owner_id" != $19)) OFFSET $20)))) OFFSET $21))
AND ($22
OR ("bundles"."kind" != $23))));
-- binds: ["", 1, 1, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "<pending_id>", false, "", 1, "", "", "<user_id>", 0, 0, false, "permission"]
