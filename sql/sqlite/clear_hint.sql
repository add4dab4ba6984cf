UPDATE `bundles`
SET `may_be_active` = ?
WHERE (((`bundles`.`session_id` = ?)
AND `bundles`.`may_be_active`)
AND ( NOT (EXISTS (SELECT `bundle_questions`.`id`
FROM `bundle_questions`
WHERE ((`bundle_questions`.`pending_id` = `bundles`.`pending_id`)
AND (((`bundle_questions`.`status` IS NULL)
OR (`bundle_questions`.`status` = ?))
OR (`bundle_questions`.`status` = ?)))
LIMIT -1  OFFSET ?))
OR  NOT ((`bundles`.`turn_id` = (SELECT `turns`.`id`
FROM `turns`
WHERE (`turns`.`session_id` = `bundles`.`session_id`)
ORDER BY `turns`.`started_at` DESC, `turns`.`seq` DESC, `turns`.`id` DESC
LIMIT ?)))));
-- binds: [false, "<session_id>", "", "pending", 0, 1]
