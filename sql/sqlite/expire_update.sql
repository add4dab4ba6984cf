UPDATE `bundle_questions`
SET `status` = ?, `expired_at` = ?
WHERE ((`bundle_questions`.`pending_id` IN (?))
AND (((`bundle_questions`.`status` IS NULL)
OR (`bundle_questions`.`status` = ?))
OR (`bundle_questions`.`status` = ?)));
-- binds: ["expired", Some(0), "<pending_id>", "", "pending"]
