SELECT `bundles`.`pending_id`, `bundles`.`session_id`, `bundles`.`kind`, `bundles`.`context`, `bundles`.`created_at`, `bundles`.`reject_reason`, `bundles`.`responded_at`, CASE WHEN ((`bundles`.`owner_key` IS NOT NULL)) THEN (`bundles`.`task_key`) END, `bundles`.`resolved_by_kind`, `bundles`.`resolved_by_id`, `bundles`.`expires_at`, `bundles`.`on_expire`, `bundles`.`default_response`
FROM `bundles`
WHERE ((`bundles`.`pending_id` = ?)
AND ((?
OR ((`bundles`.`owner_key` = ?)
OR (`bundles`.`owner_key` = ?)))
AND (?
OR (`bundles`.`kind` != ?))));
-- binds: ["<pending_id>", false, "", "<user_id>", false, "permission"]
