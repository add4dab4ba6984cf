SELECT `sessions`.`state`, `sessions`.`task_id`, (SELECT `turns`.`id`
FROM `turns`
WHERE (`turns`.`session_id` = `sessions`.`id`)
ORDER BY `turns`.`started_at` DESC, `turns`.`seq` DESC, `turns`.`id` DESC
LIMIT ?), (SELECT `tasks`.`title`
FROM `tasks`
WHERE (`tasks`.`id` = `sessions`.`task_id`)
LIMIT ?), (SELECT `tasks`.`workspace_id`
FROM `tasks`
WHERE (`tasks`.`id` = `sessions`.`task_id`)
LIMIT ?), (SELECT `workspaces`.`name`
FROM `workspaces`
WHERE (`workspaces`.`id` = (SELECT `tasks`.`workspace_id`
FROM `tasks`
WHERE (`tasks`.`id` = `sessions`.`task_id`)
LIMIT ?))
LIMIT ?)
FROM `sessions`
WHERE (`sessions`.`id` = ?);
-- binds: [1, 1, 1, 1, 1, "<session_id>"]
