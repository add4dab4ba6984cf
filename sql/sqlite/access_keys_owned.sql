SELECT `workspaces`.`id`
FROM `workspaces`
WHERE (`workspaces`.`owner_id` = ?);
-- binds: ["<user_id>"]
