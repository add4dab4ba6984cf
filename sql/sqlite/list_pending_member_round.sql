SELECT 0 AS arm, walk.*
FROM (SELECT `bundles`.`created_at`, `bundles`.`pending_id`
FROM `bundles`
WHERE (((`bundles`.`may_be_active`
AND (`bundles`.`created_at` >= ?))
AND ((`bundles`.`created_at` > ?)
OR (`bundles`.`pending_id` > ?)))
AND (`bundles`.`owner_key` = ?))
ORDER BY `bundles`.`created_at` ASC, `bundles`.`pending_id` ASC
LIMIT ?) AS walk UNION ALL SELECT 1 AS arm, walk.*
FROM (SELECT `bundles`.`created_at`, `bundles`.`pending_id`
FROM `bundles`
WHERE (((`bundles`.`may_be_active`
AND (`bundles`.`created_at` >= ?))
AND ((`bundles`.`created_at` > ?)
OR (`bundles`.`pending_id` > ?)))
AND (`bundles`.`owner_key` = ?))
ORDER BY `bundles`.`created_at` ASC, `bundles`.`pending_id` ASC
LIMIT ?) AS walk UNION ALL SELECT 2 AS arm, walk.*
FROM (SELECT `bundles`.`created_at`, `bundles`.`pending_id`
FROM `bundles`
WHERE (((`bundles`.`may_be_active`
AND (`bundles`.`created_at` >= ?))
AND ((`bundles`.`created_at` > ?)
OR (`bundles`.`pending_id` > ?)))
AND (`bundles`.`workspace_key` = ?))
ORDER BY `bundles`.`created_at` ASC, `bundles`.`pending_id` ASC
LIMIT ?) AS walk UNION ALL SELECT 3 AS arm, walk.*
FROM (SELECT `bundles`.`created_at`, `bundles`.`pending_id`
FROM `bundles`
WHERE (((`bundles`.`may_be_active`
AND (`bundles`.`created_at` >= ?))
AND ((`bundles`.`created_at` > ?)
OR (`bundles`.`pending_id` > ?)))
AND (`bundles`.`pending_id` IN (SELECT `escalation_grants`.`pending_id`
FROM `escalation_grants`
WHERE ((`escalation_grants`.`user_id` = ?)
AND (`escalation_grants`.`visible_from` <= ?)))))
ORDER BY `bundles`.`created_at` ASC, `bundles`.`pending_id` ASC
LIMIT ?) AS walk;
-- binds: [0, 0, "<pending_id>", "", 2, 0, 0, "<pending_id>", "<owner_key>", 2, 0, 0, "<pending_id>", "<workspace_key>", 2, 0, 0, "<pending_id>", "<user_id>", 1000000, 2]
