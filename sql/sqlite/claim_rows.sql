UPDATE `bundle_questions`
SET `status` = ?
WHERE ((`bundle_questions`.`pending_id` = ?)
AND ((`bundle_questions`.`status` IS NULL)
OR (`bundle_questions`.`status` IN (?, ?))));
-- binds: ["<status>", "<pending_id>", "", "pending"]
