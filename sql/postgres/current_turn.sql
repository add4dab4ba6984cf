SELECT "turns"."id"
FROM "turns"
WHERE ("turns"."session_id" = $1)
ORDER BY "turns"."started_at" DESC, "turns"."seq" DESC, "turns"."id" DESC
LIMIT $2;
-- binds: ["<session_id>", 1]
