SELECT `bundles`.`pending_id`, `bundles`.`session_id`, `bundles`.`kind`, `bundles`.`context`, `bundles`.`created_at`, `bundles`.`reject_reason`, `bundles`.`responded_at`, (SELECT `tasks`.`id`
FROM `tasks`
WHERE (`tasks`.`id` = CASE WHEN ((`bundles`.`task_id` != ?)) THEN (`bundles`.`task_id`) ELSE ((SELECT `sessions`.`task_id`
FROM `sessions`
WHERE (`sessions`.`id` = `bundles`.`session_id`)
LIMIT ?)) END)
LIMIT ?), (((EXISTS (SELECT `bundle_questions`.`id`
FROM `bundle_questions`
WHERE ((`bundle_questions`.`pending_id` = `bundles`.`pending_id`)
AND (((`bundle_questions`.`status` IS NULL)
OR (`bundle_questions`.`status` = ?))
OR (`bundle_questions`.`status` = ?)))
LIMIT -1  OFFSET ?)
AND (`bundles`.`turn_id` = (SELECT `turns`.`id`
FROM `turns`
WHERE (`turns`.`session_id` = `bundles`.`session_id`)
ORDER BY `turns`.`started_at` DESC, `turns`.`seq` DESC, `turns`.`id` DESC
LIMIT ?)))
AND EXISTS (SELECT `sessions`.`id`
FROM `sessions`
WHERE ((((`sessions`.`id` = `bundles`.`session_id`)
AND (`sessions`.`state` != ?))
AND (`sessions`.`state` != ?))
AND (`sessions`.`state` != ?))
LIMIT -1  OFFSET ?))
AND  NOT (EXISTS (SELECT `bundle_questions`.`id`
FROM `bundle_questions`
WHERE ((`bundle_questions`.`pending_id` = `bundles`.`pending_id`)
AND ((`bundle_questions`.`session_id` != `bundles`.`session_id`)
OR (`bundle_questions`.`turn_id` != `bundles`.`turn_id`)))
LIMIT -1  OFFSET ?)))
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
-- binds: ["", 1, 1, "", "pending", 0, 1, "completed", "failed", "cancelled", 0, 0, "<pending_id>", false, "", 1, "", "", "<user_id>", 0, 0, false, "permission"]
