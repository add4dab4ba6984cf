-- REL-8: row ids are 64-bit on both backends. SQLite's INTEGER PRIMARY KEY
-- is the 64-bit rowid already; only schema.rs reads it as BigInt now.
SELECT 1;
