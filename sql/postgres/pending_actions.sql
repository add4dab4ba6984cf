SELECT DISTINCT (SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $1)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $2)) END)
LIMIT $3), "bundles"."kind", (SELECT "sessions"."is_primary"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $4)
FROM "bundles"
WHERE ((("bundles"."may_be_active"
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
OR ("bundles"."kind" != $14))))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $15))
OR ("bundle_questions"."status" = $16))) OFFSET $17)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $18)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $19))
AND ("sessions"."state" != $20))
AND ("sessions"."state" != $21)) OFFSET $22))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $23))))
AND ((SELECT "tasks"."id"
FROM "tasks"
WHERE ("tasks"."id" = CASE WHEN (("bundles"."task_id" != $24)) THEN ("bundles"."task_id") ELSE ((SELECT "sessions"."task_id"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $25)) END)
LIMIT $26) = ANY($27)));
-- binds: ["", 1, 1, 1, false, "", 1, "", "", "<user_id>", 0, 0, false, "permission", "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "", 1, 1, ["<task_id>"]]
