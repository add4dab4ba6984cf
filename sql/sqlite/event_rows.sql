SELECT ?, ?, `bundles`.`pending_id`, coalesce(`bundles`.`task_key`, ?), coalesce((SELECT `tasks`.`workspace_id`
FROM `tasks`
WHERE (`tasks`.`id` = `bundles`.`task_key`)
LIMIT ?), ?), (((`bundles`.`owner_key` || ?)) IS NOT NULL), `bundles`.`kind`, `bundles`.`human_only`, ?
FROM `bundles`
WHERE (`bundles`.`pending_id` IN (?));
-- binds: ["<type>", 0, "", 1, "", "", "<data>", "<pending_id>"]
