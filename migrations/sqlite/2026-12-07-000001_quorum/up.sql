-- QUO-2: a quorum bundle is for people only. The flag sits beside kind and
-- every event records it at append, so AUTH-6's fragment keeps agents away
-- from the bundle and its events alike.
ALTER TABLE bundles ADD COLUMN human_only BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE events ADD COLUMN human_only BOOLEAN NOT NULL DEFAULT FALSE;
-- QUO-1: the policy, fixed at ask and never changed. NULL approvals: no
-- quorum. requested_by '' when nobody was named.
ALTER TABLE bundles ADD COLUMN quorum_approvals INTEGER;
ALTER TABLE bundles ADD COLUMN quorum_rejections INTEGER;
ALTER TABLE bundles ADD COLUMN quorum_requested_by TEXT;
-- QUO-4: the user ids of the deciding group's counted votes, in vote
-- order, as a JSON array; frozen by the claim ('[]' for every other).
ALTER TABLE bundles ADD COLUMN voters TEXT NOT NULL DEFAULT '[]';
-- QUO-1: who may vote, in the order the agent gave them; no rows: every
-- user who sees the bundle when voting.
CREATE TABLE quorum_eligible (
    pending_id TEXT NOT NULL REFERENCES bundles (pending_id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    user_id TEXT NOT NULL,
    PRIMARY KEY (pending_id, position)
);
-- QUO-3: one vote per user and bundle (another digest is already_voted);
-- kept through settlement and lifecycle, gone with the bundle (QUO-6).
-- Vote order is (at, id).
CREATE TABLE votes (
    id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    pending_id TEXT NOT NULL REFERENCES bundles (pending_id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    rejected BOOLEAN NOT NULL,
    answers TEXT NOT NULL,
    reject_reason TEXT NOT NULL,
    digest TEXT NOT NULL,
    UNIQUE (pending_id, user_id)
);
