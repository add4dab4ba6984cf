-- NUDGE-1: reminders as asked, fixed at ask: a JSON object
-- {"first_after_ms", "every_ms", "max"}; NULL: none.
ALTER TABLE bundles ADD COLUMN reminders TEXT;
-- NUDGE-1, PPL-6: when the escalation's grants take effect (their `from`,
-- microseconds); NULL without an escalation. The grants are the rows of
-- escalation_grants, written at ask only when this is before the deadline.
ALTER TABLE bundles ADD COLUMN escalate_at BIGINT;
-- NUDGE-2: the time of the last step transaction; every step falling at or
-- before it was taken (or passed unsent while the bundle was inactive).
-- NULL: none yet.
ALTER TABLE bundles ADD COLUMN stepped_at BIGINT;
-- NUDGE-2: the time of the bundle's next step, NULL when none remains. A
-- step is the conditional write that moves it (guarded by its old value);
-- the sweep walks this index in time order, so a sweep costs O(limit)
-- whatever the number of active bundles.
ALTER TABLE bundles ADD COLUMN next_step_at BIGINT;
CREATE INDEX bundles_next_step ON bundles (next_step_at, pending_id)
    WHERE next_step_at IS NOT NULL;
