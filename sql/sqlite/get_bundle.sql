SELECT `bundles`.`pending_id`, `bundles`.`session_id`, `bundles`.`kind`, `bundles`.`context`, `bundles`.`created_at`, `bundles`.`reject_reason`, `bundles`.`responded_at`, (SELECT `tasks`.`id`
FROM `tasks`
WHERE (`tasks`.`id` = CASE WHEN ((`bundles`.`task_id` != ?)) THEN (`bundles`.`task_id`) ELSE ((SELECT `sessions`.`task_id`
FROM `sessions`
WHERE (`sessions`.`id` = `bundles`.`session_id`)
LIMIT ?)) END)
LIMIT ?)
FROM `bundles`
WHERE ((`bundles`.`pending_id` = ?)
AND ((?
OR EXISTS (SELECT `tasks`.`id`
FROM `tasks`
WHERE ((`tasks`.`id` = CASE WHEN ((`bundles`.`task_id` != ?)) THEN (`bundles`.`task_id`) ELSE ((SELECT `sessions`.`task_id`
FROM `sessions`
WHERE (`sessions`.`id` = `bundles`.`session_id`)
LIMIT ?)) END)
AND ((`tasks`.`workspace_id` = ?)
OR  NOT (EXISTS (SELECT `workspaces`.`id`
FROM `workspaces`
WHERE (((`workspaces`.`id` = `tasks`.`workspace_id`)
AND (`workspaces`.`owner_id` != ?))
AND (`workspaces`.`owner_id` != ?))
LIMIT -1  OFFSET ?))))
LIMIT -1  OFFSET ?))
AND (?
OR (`bundles`.`kind` != ?))));
-- binds: ["", 1, 1, "<pending_id>", false, "", 1, "", "", "<user_id>", 0, 0, false, "permission"]
