SELECT `workspace_members`.`workspace_id`
FROM (`workspace_members` INNER JOIN `workspaces` ON (`workspace_members`.`workspace_id` = `workspaces`.`id`))
WHERE (((`workspace_members`.`user_id` = ?)
AND (`workspaces`.`owner_id` != ?))
AND (`workspaces`.`owner_id` != ?));
-- binds: ["<user_id>", "<user_id>", ""]
