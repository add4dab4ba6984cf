-- REL-8: row ids are 64-bit on both backends (SQLite's INTEGER PRIMARY KEY
-- already is), so a long-lived database never runs out of them.
ALTER TABLE bundle_questions ALTER COLUMN id TYPE BIGINT;
ALTER SEQUENCE bundle_questions_id_seq AS BIGINT;
ALTER TABLE turns ALTER COLUMN seq TYPE BIGINT;
ALTER SEQUENCE turns_seq_seq AS BIGINT;
