UPDATE `bundles`
SET `task_key` = CASE WHEN ((`bundles`.`task_id` != ?)) THEN (`bundles`.`task_id`) ELSE ((SELECT `sessions`.`task_id`
FROM `sessions`
WHERE (`sessions`.`id` = `bundles`.`session_id`)
LIMIT ?)) END, `owner_key` = (SELECT CASE WHEN ((`tasks`.`workspace_id` = ?)) THEN (?) ELSE (coalesce((SELECT `workspaces`.`owner_id`
FROM `workspaces`
WHERE (`workspaces`.`id` = `tasks`.`workspace_id`)
LIMIT ?), ?)) END
FROM `tasks`
WHERE (`tasks`.`id` = CASE WHEN ((`bundles`.`task_id` != ?)) THEN (`bundles`.`task_id`) ELSE ((SELECT `sessions`.`task_id`
FROM `sessions`
WHERE (`sessions`.`id` = `bundles`.`session_id`)
LIMIT ?)) END)
LIMIT ?), `workspace_key` = (SELECT CASE WHEN (((`tasks`.`workspace_id` = ?)
OR (coalesce((SELECT `workspaces`.`owner_id`
FROM `workspaces`
WHERE (`workspaces`.`id` = `tasks`.`workspace_id`)
LIMIT ?), ?) = ?))) THEN (?) ELSE (`tasks`.`workspace_id`) END
FROM `tasks`
WHERE (`tasks`.`id` = CASE WHEN ((`bundles`.`task_id` != ?)) THEN (`bundles`.`task_id`) ELSE ((SELECT `sessions`.`task_id`
FROM `sessions`
WHERE (`sessions`.`id` = `bundles`.`session_id`)
LIMIT ?)) END)
LIMIT ?)
WHERE (`bundles`.`task_key` IN (SELECT `tasks`.`id`
FROM `tasks`
WHERE (`tasks`.`workspace_id` = ?)));
-- binds: ["", 1, "", "", 1, "", "", 1, 1, "", 1, "", "", "", "", 1, 1, "<workspace_id>"]
