SELECT "events"."txid", "events"."seq", "events"."event_type", "events"."at", "events"."pending_id", "events"."task_id", "events"."workspace_id", "events"."kind", "events"."data", (($1
OR ("events"."task_exists"
AND ((CASE WHEN (("events"."workspace_id" = $2)) THEN ($3) ELSE (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "events"."workspace_id")
LIMIT $4), $5)) END = $6)
OR (CASE WHEN (("events"."workspace_id" = $7)) THEN ($8) ELSE (coalesce((SELECT "workspaces"."owner_id"
FROM "workspaces"
WHERE ("workspaces"."id" = "events"."workspace_id")
LIMIT $9), $10)) END = $11))))
AND ($12
OR ("events"."kind" != $13)))
FROM "events"
WHERE ((("events"."txid" >= $14)
AND (("events"."txid" > $15)
OR ("events"."seq" > $16)))
AND ("events"."txid" < $17))
ORDER BY "events"."txid", "events"."seq"
LIMIT $18;
-- binds: [false, "", "", 1, "", "", "", "", 1, "", "<user_id>", false, "permission", 0, 0, 0, 9223372036854775807, 100]
