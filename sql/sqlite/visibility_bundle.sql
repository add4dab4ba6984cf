SELECT EXISTS (SELECT `bundles`.`pending_id`
FROM `bundles`
WHERE ((`bundles`.`pending_id` = ?)
AND ((?
OR ((`bundles`.`owner_key` = ?)
OR (`bundles`.`owner_key` = ?)))
AND (?
OR (`bundles`.`kind` != ?)))));
-- binds: ["<pending_id>", false, "", "<user_id>", false, "permission"]
