DROP INDEX web_sessions_by_token;
DROP TABLE web_sessions;
DROP TABLE api_tokens;
