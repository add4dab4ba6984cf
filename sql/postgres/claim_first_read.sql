SELECT "bundles"."pending_id", "bundles"."session_id", "bundles"."kind", "bundles"."context", "bundles"."created_at", "bundles"."reject_reason", "bundles"."responded_at", (SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $1)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $2)) END)
LIMIT $3), "claim_rows"."id", "claim_rows"."pending_id", "claim_rows"."question_id", "claim_rows"."question_index", "claim_rows"."payload", "claim_rows"."status", "claim_rows"."response", "claim_rows"."created_at"
FROM ("bundles" LEFT OUTER JOIN "bundle_questions" AS "claim_rows" ON ("claim_rows"."pending_id" = "bundles"."pending_id"))
WHERE (("bundles"."pending_id" = $4)
AND (($5
OR EXISTS (SELECT "tasks"."id"
FROM "tasks"
WHERE (("tasks"."id" = CASE WHEN (("bundles"."task_id" != $6)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $7)) END)
AND (("tasks"."workspace_id" = $8)
OR  NOT (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE ((("workspaces"."id" = "tasks"."workspace_id")
AND ("workspaces"."owner_id" != $9))
AND ("workspaces"."owner_id" != $10)) OFFSET $11)))) OFFSET $12))
AND ($13
OR ("bundles"."kind" != $14))));
-- binds: ["", 1, 1, "<pending_id>", false, "", 1, "", "", "<user_id>", 0, 0, false, "permission"]
