SELECT `bundles`.`pending_id`
FROM `bundles`
WHERE ((((EXISTS (SELECT `bundle_questions`.`id`, `bundle_questions`.`pending_id`, `bundle_questions`.`session_id`, `bundle_questions`.`turn_id`, `bundle_questions`.`question_id`, `bundle_questions`.`question_index`, `bundle_questions`.`payload`, `bundle_questions`.`status`, `bundle_questions`.`response`, `bundle_questions`.`created_at`
FROM `bundle_questions`
WHERE ((`bundle_questions`.`pending_id` = `bundles`.`pending_id`)
AND ((`bundle_questions`.`status` IS NULL)
OR (`bundle_questions`.`status` IN (?, ?)))))
AND (`bundles`.`turn_id` = (SELECT `turns`.`id`
FROM `turns`
WHERE (`turns`.`session_id` = `bundles`.`session_id`)
ORDER BY `turns`.`started_at` DESC, `turns`.`seq` DESC, `turns`.`id` DESC
LIMIT ?)))
AND EXISTS (SELECT `sessions`.`id`, `sessions`.`task_id`, `sessions`.`state`, `sessions`.`is_primary`
FROM `sessions`
WHERE ((`sessions`.`id` = `bundles`.`session_id`)
AND (`sessions`.`state` NOT IN (?, ?, ?)))))
AND  NOT (EXISTS (SELECT `bundle_questions`.`id`, `bundle_questions`.`pending_id`, `bundle_questions`.`session_id`, `bundle_questions`.`turn_id`, `bundle_questions`.`question_id`, `bundle_questions`.`question_index`, `bundle_questions`.`payload`, `bundle_questions`.`status`, `bundle_questions`.`response`, `bundle_questions`.`created_at`
FROM `bundle_questions`
WHERE ((`bundle_questions`.`pending_id` = `bundles`.`pending_id`)
AND ((`bundle_questions`.`session_id` != `bundles`.`session_id`)
OR (`bundle_questions`.`turn_id` != `bundles`.`turn_id`))))))
AND (`bundles`.`session_id` = ?));
-- binds: ["", "pending", 1, "completed", "failed", "cancelled", "<session_id>"]
