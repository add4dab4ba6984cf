SELECT 0 AS arm, walk.*
FROM (SELECT `bundles`.`responded_at`, `bundles`.`pending_id`
FROM `bundles`
WHERE (((`bundles`.`responded_at` IS NOT NULL)
AND (`bundles`.`responded_at`, `bundles`.`pending_id`) < (?, ?))
AND (`bundles`.`owner_key` = ?))
ORDER BY `bundles`.`responded_at` DESC, `bundles`.`pending_id` DESC
LIMIT ?) AS walk UNION ALL SELECT 1 AS arm, walk.*
FROM (SELECT `bundles`.`responded_at`, `bundles`.`pending_id`
FROM `bundles`
WHERE (((`bundles`.`responded_at` IS NOT NULL)
AND (`bundles`.`responded_at`, `bundles`.`pending_id`) < (?, ?))
AND (`bundles`.`owner_key` = ?))
ORDER BY `bundles`.`responded_at` DESC, `bundles`.`pending_id` DESC
LIMIT ?) AS walk UNION ALL SELECT 2 AS arm, walk.*
FROM (SELECT `bundles`.`responded_at`, `bundles`.`pending_id`
FROM `bundles`
WHERE (((`bundles`.`responded_at` IS NOT NULL)
AND (`bundles`.`responded_at`, `bundles`.`pending_id`) < (?, ?))
AND (`bundles`.`workspace_key` = ?))
ORDER BY `bundles`.`responded_at` DESC, `bundles`.`pending_id` DESC
LIMIT ?) AS walk UNION ALL SELECT 3 AS arm, walk.*
FROM (SELECT `bundles`.`responded_at`, `bundles`.`pending_id`
FROM `bundles`
WHERE (((`bundles`.`responded_at` IS NOT NULL)
AND (`bundles`.`responded_at`, `bundles`.`pending_id`) < (?, ?))
AND (`bundles`.`pending_id` IN (SELECT `escalation_grants`.`pending_id`
FROM `escalation_grants`
WHERE ((`escalation_grants`.`user_id` = ?)
AND (`escalation_grants`.`visible_from` <= ?)))))
ORDER BY `bundles`.`responded_at` DESC, `bundles`.`pending_id` DESC
LIMIT ?) AS walk;
-- binds: [0, "<pending_id>", "", 2, 0, "<pending_id>", "<owner_key>", 2, 0, "<pending_id>", "<workspace_key>", 2, 0, "<pending_id>", "<user_id>", 1000000, 2]
