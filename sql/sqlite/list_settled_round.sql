SELECT 0 AS arm, walk.*
FROM (SELECT `bundles`.`pending_id`, `bundles`.`session_id`, `bundles`.`kind`, `bundles`.`context`, `bundles`.`created_at`, `bundles`.`reject_reason`, `bundles`.`responded_at`, CASE WHEN ((`bundles`.`owner_key` IS NOT NULL)) THEN (`bundles`.`task_key`) END, `bundles`.`resolved_by_kind`, `bundles`.`resolved_by_id`, `bundles`.`expires_at`, `bundles`.`on_expire`, `bundles`.`default_response`, `bundles`.`human_only`, `bundles`.`quorum_approvals`, `bundles`.`quorum_rejections`, `bundles`.`quorum_requested_by`, `bundles`.`voters`, `bundles`.`reminders`, `bundles`.`escalate_at`, `bundles`.`stepped_at`
FROM `bundles`
WHERE (((`bundles`.`responded_at`, `bundles`.`pending_id`) < (?, ?)
AND ((((((`bundles`.`responded_at` IS NOT NULL)
AND ((?
OR ((((`bundles`.`owner_key` = ?)
OR (`bundles`.`owner_key` = ?))
OR EXISTS (SELECT `workspace_members`.`workspace_id`
FROM `workspace_members`
WHERE ((`workspace_members`.`workspace_id` = `bundles`.`workspace_key`)
AND (`workspace_members`.`user_id` = ?))
LIMIT -1  OFFSET ?))
OR (EXISTS (SELECT `escalation_grants`.`pending_id`
FROM `escalation_grants`
WHERE (((`escalation_grants`.`pending_id` = `bundles`.`pending_id`)
AND (`escalation_grants`.`user_id` = ?))
AND (`escalation_grants`.`visible_from` <= ?))
LIMIT -1  OFFSET ?)
AND (((`bundles`.`owner_key` || ?)) IS NOT NULL))))
AND (?
OR ((`bundles`.`kind` != ?)
AND (`bundles`.`human_only` = ?)))))
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
LIMIT ?) AS walk UNION ALL SELECT 1 AS arm, walk.*
FROM (SELECT `bundles`.`pending_id`, `bundles`.`session_id`, `bundles`.`kind`, `bundles`.`context`, `bundles`.`created_at`, `bundles`.`reject_reason`, `bundles`.`responded_at`, CASE WHEN ((`bundles`.`owner_key` IS NOT NULL)) THEN (`bundles`.`task_key`) END, `bundles`.`resolved_by_kind`, `bundles`.`resolved_by_id`, `bundles`.`expires_at`, `bundles`.`on_expire`, `bundles`.`default_response`, `bundles`.`human_only`, `bundles`.`quorum_approvals`, `bundles`.`quorum_rejections`, `bundles`.`quorum_requested_by`, `bundles`.`voters`, `bundles`.`reminders`, `bundles`.`escalate_at`, `bundles`.`stepped_at`
FROM `bundles`
WHERE (((`bundles`.`responded_at`, `bundles`.`pending_id`) < (?, ?)
AND ((((((`bundles`.`responded_at` IS NOT NULL)
AND ((?
OR ((((`bundles`.`owner_key` = ?)
OR (`bundles`.`owner_key` = ?))
OR EXISTS (SELECT `workspace_members`.`workspace_id`
FROM `workspace_members`
WHERE ((`workspace_members`.`workspace_id` = `bundles`.`workspace_key`)
AND (`workspace_members`.`user_id` = ?))
LIMIT -1  OFFSET ?))
OR (EXISTS (SELECT `escalation_grants`.`pending_id`
FROM `escalation_grants`
WHERE (((`escalation_grants`.`pending_id` = `bundles`.`pending_id`)
AND (`escalation_grants`.`user_id` = ?))
AND (`escalation_grants`.`visible_from` <= ?))
LIMIT -1  OFFSET ?)
AND (((`bundles`.`owner_key` || ?)) IS NOT NULL))))
AND (?
OR ((`bundles`.`kind` != ?)
AND (`bundles`.`human_only` = ?)))))
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
LIMIT ?) AS walk UNION ALL SELECT 2 AS arm, walk.*
FROM (SELECT `bundles`.`pending_id`, `bundles`.`session_id`, `bundles`.`kind`, `bundles`.`context`, `bundles`.`created_at`, `bundles`.`reject_reason`, `bundles`.`responded_at`, CASE WHEN ((`bundles`.`owner_key` IS NOT NULL)) THEN (`bundles`.`task_key`) END, `bundles`.`resolved_by_kind`, `bundles`.`resolved_by_id`, `bundles`.`expires_at`, `bundles`.`on_expire`, `bundles`.`default_response`, `bundles`.`human_only`, `bundles`.`quorum_approvals`, `bundles`.`quorum_rejections`, `bundles`.`quorum_requested_by`, `bundles`.`voters`, `bundles`.`reminders`, `bundles`.`escalate_at`, `bundles`.`stepped_at`
FROM `bundles`
WHERE (((`bundles`.`responded_at`, `bundles`.`pending_id`) < (?, ?)
AND ((((((`bundles`.`responded_at` IS NOT NULL)
AND ((?
OR ((((`bundles`.`owner_key` = ?)
OR (`bundles`.`owner_key` = ?))
OR EXISTS (SELECT `workspace_members`.`workspace_id`
FROM `workspace_members`
WHERE ((`workspace_members`.`workspace_id` = `bundles`.`workspace_key`)
AND (`workspace_members`.`user_id` = ?))
LIMIT -1  OFFSET ?))
OR (EXISTS (SELECT `escalation_grants`.`pending_id`
FROM `escalation_grants`
WHERE (((`escalation_grants`.`pending_id` = `bundles`.`pending_id`)
AND (`escalation_grants`.`user_id` = ?))
AND (`escalation_grants`.`visible_from` <= ?))
LIMIT -1  OFFSET ?)
AND (((`bundles`.`owner_key` || ?)) IS NOT NULL))))
AND (?
OR ((`bundles`.`kind` != ?)
AND (`bundles`.`human_only` = ?)))))
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
AND (`bundles`.`workspace_key` = ?))
ORDER BY `bundles`.`responded_at` DESC, `bundles`.`pending_id` DESC
LIMIT ?) AS walk UNION ALL SELECT 3 AS arm, walk.*
FROM (SELECT `bundles`.`pending_id`, `bundles`.`session_id`, `bundles`.`kind`, `bundles`.`context`, `bundles`.`created_at`, `bundles`.`reject_reason`, `bundles`.`responded_at`, CASE WHEN ((`bundles`.`owner_key` IS NOT NULL)) THEN (`bundles`.`task_key`) END, `bundles`.`resolved_by_kind`, `bundles`.`resolved_by_id`, `bundles`.`expires_at`, `bundles`.`on_expire`, `bundles`.`default_response`, `bundles`.`human_only`, `bundles`.`quorum_approvals`, `bundles`.`quorum_rejections`, `bundles`.`quorum_requested_by`, `bundles`.`voters`, `bundles`.`reminders`, `bundles`.`escalate_at`, `bundles`.`stepped_at`
FROM `bundles`
WHERE (((`bundles`.`responded_at`, `bundles`.`pending_id`) < (?, ?)
AND ((((((`bundles`.`responded_at` IS NOT NULL)
AND ((?
OR ((((`bundles`.`owner_key` = ?)
OR (`bundles`.`owner_key` = ?))
OR EXISTS (SELECT `workspace_members`.`workspace_id`
FROM `workspace_members`
WHERE ((`workspace_members`.`workspace_id` = `bundles`.`workspace_key`)
AND (`workspace_members`.`user_id` = ?))
LIMIT -1  OFFSET ?))
OR (EXISTS (SELECT `escalation_grants`.`pending_id`
FROM `escalation_grants`
WHERE (((`escalation_grants`.`pending_id` = `bundles`.`pending_id`)
AND (`escalation_grants`.`user_id` = ?))
AND (`escalation_grants`.`visible_from` <= ?))
LIMIT -1  OFFSET ?)
AND (((`bundles`.`owner_key` || ?)) IS NOT NULL))))
AND (?
OR ((`bundles`.`kind` != ?)
AND (`bundles`.`human_only` = ?)))))
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
AND (`bundles`.`pending_id` IN (SELECT `escalation_grants`.`pending_id`
FROM `escalation_grants`
WHERE ((`escalation_grants`.`user_id` = ?)
AND (`escalation_grants`.`visible_from` <= ?)))))
ORDER BY `bundles`.`responded_at` DESC, `bundles`.`pending_id` DESC
LIMIT ?) AS walk;
-- binds: [0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<owner_key>", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<workspace_key>", 2, 0, "<pending_id>", false, "", "<user_id>", "<user_id>", 0, "<user_id>", 1000000, 0, "", false, "permission", false, false, "<workspace_id>", 0, "", "answered", "rejected", "cancelled", 0, "", "pending", 0, "<user_id>", 1000000, 2]
