-- EXP-1, section 3: a bundle's deadline, typed, in microseconds like every
-- other time (DM-2); NULL is none. on_expire is the action word ('' without
-- a deadline). default_response is the normalized default of `answer` and
-- `reject` as the compact JSON text EXP-5 shows and AUD-5 hashes, byte for
-- byte: one column, so the digest is of exactly what is stored.
ALTER TABLE bundles ADD COLUMN expires_at BIGINT;
ALTER TABLE bundles ADD COLUMN on_expire TEXT NOT NULL DEFAULT '';
ALTER TABLE bundles ADD COLUMN default_response TEXT;
-- EXP-4: the sweep and the next deadline walk the unsettled deadlines in
-- order, O(limit).
CREATE INDEX bundles_due ON bundles (expires_at, pending_id)
    WHERE may_be_active AND expires_at IS NOT NULL;
