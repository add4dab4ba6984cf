SELECT (SELECT CASE WHEN ((`tasks`.`workspace_id` = ?)) THEN (?) ELSE (coalesce((SELECT `workspaces`.`owner_id`
FROM `workspaces`
WHERE (`workspaces`.`id` = `tasks`.`workspace_id`)
LIMIT ?), ?)) END
FROM `tasks`
WHERE (`tasks`.`id` = ?)
LIMIT ?), (SELECT CASE WHEN (((`tasks`.`workspace_id` = ?)
OR (coalesce((SELECT `workspaces`.`owner_id`
FROM `workspaces`
WHERE (`workspaces`.`id` = `tasks`.`workspace_id`)
LIMIT ?), ?) = ?))) THEN (?) ELSE (`tasks`.`workspace_id`) END
FROM `tasks`
WHERE (`tasks`.`id` = ?)
LIMIT ?);
-- binds: ["", "", 1, "", "<task_id>", 1, "", 1, "", "", "", "<task_id>", 1]
