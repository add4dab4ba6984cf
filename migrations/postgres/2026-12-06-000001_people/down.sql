DROP TABLE workspace_members;
DROP TABLE users;
