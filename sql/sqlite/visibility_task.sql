SELECT EXISTS (SELECT `tasks`.`id`
FROM `tasks`
WHERE ((`tasks`.`id` = ?)
AND (?
OR ((`tasks`.`workspace_id` = ?)
OR  NOT (EXISTS (SELECT `workspaces`.`id`
FROM `workspaces`
WHERE (((`workspaces`.`id` = `tasks`.`workspace_id`)
AND (`workspaces`.`owner_id` != ?))
AND (`workspaces`.`owner_id` != ?))
LIMIT -1  OFFSET ?))))));
-- binds: ["<task_id>", false, "", "", "<user_id>", 0]
