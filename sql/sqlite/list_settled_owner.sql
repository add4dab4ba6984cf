SELECT `bundles`.`pending_id`, `bundles`.`session_id`, `bundles`.`kind`, `bundles`.`context`, `bundles`.`created_at`, `bundles`.`reject_reason`, `bundles`.`responded_at`, CASE WHEN ((`bundles`.`owner_key` IS NOT NULL)) THEN (`bundles`.`task_key`) END, `bundles`.`resolved_by_kind`, `bundles`.`resolved_by_id`, `bundles`.`expires_at`, `bundles`.`on_expire`, `bundles`.`default_response`
FROM `bundles`
WHERE (((`bundles`.`responded_at`, `bundles`.`pending_id`) < (?, ?)
AND ((((((`bundles`.`responded_at` IS NOT NULL)
AND ((?
OR ((`bundles`.`owner_key` = ?)
OR (`bundles`.`owner_key` = ?)))
AND (?
OR (`bundles`.`kind` != ?))))
AND (?
OR EXISTS (SELECT `tasks`.`id`
FROM `tasks`
WHERE ((`tasks`.`id` = `bundles`.`task_key`)
AND (`tasks`.`workspace_id` = ?))
LIMIT -1  OFFSET ?)))
AND (((`bundles`.`owner_key` || ?)) IS NOT NULL))
AND EXISTS (SELECT `bundle_questions`.`id`
FROM `bundle_questions`
WHERE ((`bundle_questions`.`pending_id` = `bundles`.`pending_id`)
AND (((`bundle_questions`.`status` = ?)
OR (`bundle_questions`.`status` = ?))
OR (`bundle_questions`.`status` = ?)))
LIMIT -1  OFFSET ?))
AND  NOT (EXISTS (SELECT `bundle_questions`.`id`
FROM `bundle_questions`
WHERE ((`bundle_questions`.`pending_id` = `bundles`.`pending_id`)
AND (((`bundle_questions`.`status` IS NULL)
OR (`bundle_questions`.`status` = ?))
OR (`bundle_questions`.`status` = ?)))
LIMIT -1  OFFSET ?))))
AND (`bundles`.`owner_key` = ?))
ORDER BY `bundles`.`responded_at` DESC, `bundles`.`pending_id` DESC
LIMIT ?;
-- binds: [0, "<pending_id>", false, "", "<user_id>", false, "permission", false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<owner_key>", 51]
