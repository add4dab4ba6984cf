SELECT `tasks`.`id`
FROM `tasks`
WHERE ((`tasks`.`id` IN (?))
AND (?
OR ((CASE WHEN ((`tasks`.`workspace_id` = ?)) THEN (?) ELSE (coalesce((SELECT `workspaces`.`owner_id`
FROM `workspaces`
WHERE (`workspaces`.`id` = `tasks`.`workspace_id`)
LIMIT ?), ?)) END = ?)
OR (CASE WHEN ((`tasks`.`workspace_id` = ?)) THEN (?) ELSE (coalesce((SELECT `workspaces`.`owner_id`
FROM `workspaces`
WHERE (`workspaces`.`id` = `tasks`.`workspace_id`)
LIMIT ?), ?)) END = ?))));
-- binds: ["<task_id>", false, "", "", 1, "", "", "", "", 1, "", "<user_id>"]
