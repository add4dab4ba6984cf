UPDATE `bundle_questions`
SET `status` = ?, `response` = ?
WHERE ((`bundle_questions`.`id` = ?)
AND (((`bundle_questions`.`status` IS NULL)
OR (`bundle_questions`.`status` = ?))
OR (`bundle_questions`.`status` = ?)));
-- binds: ["<status>", Some("<answer>"), 1, "", "pending"]
