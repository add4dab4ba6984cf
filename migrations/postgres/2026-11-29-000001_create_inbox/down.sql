DROP TABLE bundle_questions;
DROP TABLE bundles;
DROP TABLE turns;
DROP TABLE sessions;
DROP TABLE tasks;
DROP TABLE workspaces;
