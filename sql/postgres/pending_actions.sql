SELECT DISTINCT CASE WHEN (("bundles"."owner_key" IS NOT NULL)) THEN ("bundles"."task_key") END, "bundles"."kind", (SELECT "sessions"."is_primary"
FROM "sessions"
WHERE ("sessions"."id" = "bundles"."session_id")
LIMIT $1)
FROM "bundles"
WHERE ((((("bundles"."task_key" = ANY($2))
AND (CAST("bundles"."may_be_active" AS INTEGER) = $3))
AND ((("bundles"."owner_key" || $4)) IS NOT NULL))
AND (($5
OR (((("bundles"."owner_key" = $6)
OR ("bundles"."owner_key" = $7))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $8)) OFFSET $9))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $10))
AND ("escalation_grants"."visible_from" <= $11)) OFFSET $12)
AND ((("bundles"."owner_key" || $13)) IS NOT NULL))))
AND ($14
OR (("bundles"."kind" != $15)
AND ("bundles"."human_only" = $16)))))
AND ((("bundles"."expires_at" IS NULL)
OR ("bundles"."expires_at" > $17))
AND (((EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $18))
OR ("bundle_questions"."status" = $19))) OFFSET $20)
AND ("bundles"."turn_id" = (SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = "bundles"."session_id")
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $21)))
AND EXISTS (SELECT "sessions"."id"
FROM "sessions"
WHERE (((("sessions"."id" = "bundles"."session_id")
AND ("sessions"."state" != $22))
AND ("sessions"."state" != $23))
AND ("sessions"."state" != $24)) OFFSET $25))
AND  NOT (EXISTS (SELECT "bundle_questions"."id"
FROM "bundle_questions"
WHERE (("bundle_questions"."pending_id" = "bundles"."pending_id")
AND (("bundle_questions"."session_id" != "bundles"."session_id")
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $26)))));
-- binds: [1, ["<task_id>"], 1, "", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0]
