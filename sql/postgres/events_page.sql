SELECT "events"."txid", "events"."seq", "events"."event_type", "events"."at", "events"."pending_id", "events"."task_id", "events"."workspace_id", "events"."kind", "events"."data", (($1
OR ("events"."task_exists"
AND (((("events"."workspace_id" = $2)
OR (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "events"."workspace_id")
LIMIT $3), $4) = $5))
OR (EXISTS (SELECT "workspaces"."id"
FROM "workspaces"
WHERE (("workspaces"."id" = "events"."workspace_id")
AND ("workspaces"."owner_id" = $6)) OFFSET $7)
OR EXISTS (SELECT "workspace_members"."workspace_id"
FROM "workspace_members"
WHERE (("workspace_members"."workspace_id" = "events"."workspace_id")
AND ("workspace_members"."user_id" = $8)) OFFSET $9)))
OR EXISTS (SELECT "escalation_grants"."pending_id"
FROM "escalation_grants"
WHERE ((("escalation_grants"."pending_id" = "events"."pending_id")
AND ("escalation_grants"."user_id" = $10))
AND ("escalation_grants"."visible_from" <= $11)) OFFSET $12))))
AND ($13
OR (("events"."kind" != $14)
AND ("events"."human_only" = $15))))
FROM "events"
WHERE ((("events"."txid" >= $16)
AND (("events"."txid" > $17)
OR ("events"."seq" > $18)))
AND ("events"."txid" < $19))
ORDER BY "events"."txid", "events"."seq"
LIMIT $20;
-- binds: [false, "", 1, "", "", "<user_id>", 0, "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, 0, 0, 0, 9223372036854775807, 100]
