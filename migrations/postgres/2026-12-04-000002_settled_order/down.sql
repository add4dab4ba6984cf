DROP INDEX bundles_settled_by_owner;
DROP INDEX bundles_settled;
