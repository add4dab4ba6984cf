SELECT `bundles`.`pending_id`
FROM `bundles`
WHERE (`bundles`.`response_delivery_pending`
AND (`bundles`.`agent_disconnected`
OR  NOT (EXISTS (SELECT `attachments`.`pending_id`
FROM `attachments`
WHERE ((`attachments`.`pending_id` = `bundles`.`pending_id`)
AND EXISTS (SELECT `handles`.`id`
FROM `handles`
WHERE ((`handles`.`id` = `attachments`.`handle_id`)
AND (`handles`.`alive_until` >= ?))))
LIMIT -1  OFFSET ?))))
ORDER BY `bundles`.`responded_at` ASC, `bundles`.`pending_id` ASC
LIMIT ?;
-- binds: [0, 0, 50]
