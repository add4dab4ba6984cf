ALTER TABLE bundle_questions DROP COLUMN expired_at;
