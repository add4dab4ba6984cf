SELECT EXISTS (SELECT `tasks`.`id`
FROM `tasks`
WHERE ((`tasks`.`id` = ?)
AND (?
OR (((`tasks`.`workspace_id` = ?)
OR (coalesce((SELECT `workspaces`.`owner_id`
FROM `workspaces`
WHERE (`workspaces`.`id` = `tasks`.`workspace_id`)
LIMIT ?), ?) = ?))
OR (EXISTS (SELECT `workspaces`.`id`
FROM `workspaces`
WHERE ((`workspaces`.`id` = `tasks`.`workspace_id`)
AND (`workspaces`.`owner_id` = ?))
LIMIT -1  OFFSET ?)
OR EXISTS (SELECT `workspace_members`.`workspace_id`
FROM `workspace_members`
WHERE ((`workspace_members`.`workspace_id` = `tasks`.`workspace_id`)
AND (`workspace_members`.`user_id` = ?))
LIMIT -1  OFFSET ?))))));
-- binds: ["<task_id>", false, "", 1, "", "", "<user_id>", 0, "<user_id>", 0]
