SELECT `bundles`.`pending_id`, `bundles`.`session_id`
FROM `bundles`
WHERE ((`bundles`.`next_step_at` IS NOT NULL)
AND (`bundles`.`next_step_at` <= ?))
ORDER BY `bundles`.`next_step_at` ASC, `bundles`.`pending_id` ASC
LIMIT ?;
-- binds: [1000000, 100]
