DROP INDEX bundles_next_step;
ALTER TABLE bundles DROP COLUMN next_step_at;
ALTER TABLE bundles DROP COLUMN stepped_at;
ALTER TABLE bundles DROP COLUMN escalate_at;
ALTER TABLE bundles DROP COLUMN reminders;
