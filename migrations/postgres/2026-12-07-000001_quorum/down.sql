DROP TABLE votes;
DROP TABLE quorum_eligible;
ALTER TABLE bundles DROP COLUMN voters;
ALTER TABLE bundles DROP COLUMN quorum_requested_by;
ALTER TABLE bundles DROP COLUMN quorum_rejections;
ALTER TABLE bundles DROP COLUMN quorum_approvals;
ALTER TABLE events DROP COLUMN human_only;
ALTER TABLE bundles DROP COLUMN human_only;
