SELECT `events`.`txid`, `events`.`seq`, `events`.`event_type`, `events`.`at`, `events`.`pending_id`, `events`.`task_id`, `events`.`workspace_id`, `events`.`kind`, `events`.`data`, ((?
OR (`events`.`task_exists`
AND ((CASE WHEN ((`events`.`workspace_id` = ?)) THEN (?) ELSE (coalesce((SELECT `workspaces`.`owner_id`
FROM `workspaces`
WHERE (`workspaces`.`id` = `events`.`workspace_id`)
LIMIT ?), ?)) END = ?)
OR (CASE WHEN ((`events`.`workspace_id` = ?)) THEN (?) ELSE (coalesce((SELECT `workspaces`.`owner_id`
FROM `workspaces`
WHERE (`workspaces`.`id` = `events`.`workspace_id`)
LIMIT ?), ?)) END = ?))))
AND (?
OR (`events`.`kind` != ?)))
FROM `events`
WHERE (((`events`.`txid` >= ?)
AND ((`events`.`txid` > ?)
OR (`events`.`seq` > ?)))
AND (`events`.`txid` < ?))
ORDER BY `events`.`txid`, `events`.`seq`
LIMIT ?;
-- binds: [false, "", "", 1, "", "", "", "", 1, "", "<user_id>", false, "permission", 0, 0, 0, 9223372036854775807, 100]
