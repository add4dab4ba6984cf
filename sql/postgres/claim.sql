WITH "claimed" AS (UPDATE "bundle_questions"
SET "status" = $1, "response" = CASE "bundle_questions"."id" WHEN $2 THEN $3 WHEN $4 THEN $5 WHEN $6 THEN $7 WHEN $8 THEN $9 END
WHERE (((("bundle_questions"."pending_id" = $10)
AND "bundle_questions"."id" IN ($11, $12, $13, $14))
AND ((("bundle_questions"."status" IS NULL)
OR ("bundle_questions"."status" = $15))
OR ("bundle_questions"."status" = $16)))
AND EXISTS (SELECT "bundles"."pending_id"
FROM "bundles"
WHERE ((((("bundles"."expires_at" IS NULL)
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
OR ("bundle_questions"."turn_id" != "bundles"."turn_id"))) OFFSET $26))))
AND ("bundles"."pending_id" = $27))
AND (($28
OR (((("bundles"."owner_key" = $29)
OR ("bundles"."owner_key" = $30))
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "bundles"."workspace_key")
AND ("workspace_members"."user_id" = $31)) OFFSET $32))
OR (EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "bundles"."pending_id")
AND ("escalation_grants"."user_id" = $33))
AND ("escalation_grants"."visible_from" <= $34)) OFFSET $35)
AND ((("bundles"."owner_key" || $36)) IS NOT NULL))))
AND ($37
OR (("bundles"."kind" != $38)
AND ("bundles"."human_only" = $39))))))) RETURNING "bundle_questions"."id"), "marked" AS (UPDATE "bundles"
SET "reject_reason" = $40, "responded_at" = $41, "resolved_by_kind" = $42, "resolved_by_id" = $43, "voters" = $44, "response_delivery_pending" = $45, "may_be_active" = $46
WHERE (("bundles"."pending_id" = $47)
AND EXISTS (SELECT "claimed"."id"
FROM "claimed"))), "logged" AS (INSERT INTO "attempts" ("pending_id", "at", "principal_kind", "user_id", "agent_id", "channel", "outcome", "digest") SELECT $48, $49, $50, $51, $52, $53, $54, $55
FROM "claimed"
WHERE $56
LIMIT $57), "announced" AS (INSERT INTO "events" ("event_type", "at", "pending_id", "task_id", "workspace_id", "task_exists", "kind", "human_only", "data") SELECT $58, $59, "bundles"."pending_id", coalesce("bundles"."task_key", $60), coalesce((SELECT "tasks"."workspace_id"
FROM "tasks"
WHERE ("tasks"."id" = "bundles"."task_key")
LIMIT $61), $62), ((("bundles"."owner_key" || $63)) IS NOT NULL), "bundles"."kind", "bundles"."human_only", $64
FROM "bundles"
WHERE ((("bundles"."pending_id" = ANY($65))
AND EXISTS (SELECT "claimed"."id"
FROM "claimed"))
AND $66)) SELECT "claimed"."id"
FROM "claimed";
-- binds: ["<status>", 1, Some("<answer 1>"), 2, Some("<answer 2>"), 0, None, 0, None, "<pending_id>", 1, 2, 0, 0, "", "pending", 1000000, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, "<reject_reason>", 0, "<kind>", "<id>", "<voters>", true, false, "<pending_id>", "<pending_id>", 1000000, "<principal_kind>", "<user_id>", "<agent_id>", "<channel>", "won", "<digest>", true, 1, "bundle.resolved", 0, "", 1, "", "", "<data>", ["<pending_id>"], true]
