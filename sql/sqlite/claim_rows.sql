UPDATE `bundle_questions`
SET `status` = ?, `response` = CASE `bundle_questions`.`id` WHEN ? THEN ? END
WHERE ((((`bundle_questions`.`pending_id` = ?)
AND `bundle_questions`.`id` IN (?))
AND (((`bundle_questions`.`status` IS NULL)
OR (`bundle_questions`.`status` = ?))
OR (`bundle_questions`.`status` = ?)))
AND TRUE);
-- binds: ["<status>", 1, Some("<answer 1>"), "<pending_id>", 1, "", "pending"]
