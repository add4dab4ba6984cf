-- HTTP-4: API tokens and the web inbox's sessions. Only digests are
-- stored: a token (or a session id) is shown once and never kept, so a
-- copy of the database signs nobody in.
CREATE TABLE api_tokens (
    -- Lower-case hex SHA-256 of the token text.
    digest TEXT NOT NULL PRIMARY KEY,
    -- The principal in its WIRE-5 parts (AUTH-1); grants space-separated.
    principal_kind TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    grants TEXT NOT NULL,
    label TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
-- A session dies with its token: the lookup joins a live token, and
-- deleting a token deletes its sessions.
CREATE TABLE web_sessions (
    digest TEXT NOT NULL PRIMARY KEY,
    token_digest TEXT NOT NULL REFERENCES api_tokens (digest) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX web_sessions_by_token ON web_sessions (token_digest);
