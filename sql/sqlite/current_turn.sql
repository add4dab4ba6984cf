SELECT `turns`.`id`
FROM `turns`
WHERE (`turns`.`session_id` = ?)
ORDER BY `turns`.`started_at` DESC, `turns`.`seq` DESC, `turns`.`id` DESC
LIMIT ?;
-- binds: ["<session_id>", 1]
