SELECT `events`.`txid`, `events`.`seq`, `events`.`event_type`, `events`.`at`, `events`.`pending_id`, `events`.`task_id`, `events`.`workspace_id`, `events`.`kind`, `events`.`data`, ((?
OR (`events`.`task_exists`
AND ((((`events`.`workspace_id` = ?)
OR (coalesce((SELECT `workspaces`.`owner_id`
FROM `workspaces`
WHERE (`workspaces`.`id` = `events`.`workspace_id`)
LIMIT ?), ?) = ?))
OR (EXISTS (SELECT `workspaces`.`id`
FROM `workspaces`
WHERE ((`workspaces`.`id` = `events`.`workspace_id`)
AND (`workspaces`.`owner_id` = ?))
LIMIT -1  OFFSET ?)
OR EXISTS (SELECT `workspace_members`.`workspace_id`
FROM `workspace_members`
WHERE ((`workspace_members`.`workspace_id` = `events`.`workspace_id`)
AND (`workspace_members`.`user_id` = ?))
LIMIT -1  OFFSET ?)))
OR EXISTS (SELECT `escalation_grants`.`pending_id`
FROM `escalation_grants`
WHERE (((`escalation_grants`.`pending_id` = `events`.`pending_id`)
AND (`escalation_grants`.`user_id` = ?))
AND (`escalation_grants`.`visible_from` <= ?))
LIMIT -1  OFFSET ?))))
AND (?
OR ((`events`.`kind` != ?)
AND (`events`.`human_only` = ?))))
FROM `events`
WHERE (((`events`.`txid` >= ?)
AND ((`events`.`txid` > ?)
OR (`events`.`seq` > ?)))
AND (`events`.`txid` < ?))
ORDER BY `events`.`txid`, `events`.`seq`
LIMIT ?;
-- binds: [false, "", 1, "", "", "<user_id>", 0, "<user_id>", 0, "<user_id>", 1000000, 0, false, "permission", false, 0, 0, 0, 9223372036854775807, 100]
