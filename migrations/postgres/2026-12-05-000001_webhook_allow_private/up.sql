-- PROD-4: an endpoint may deliver to a loopback, private, link-local or
-- cloud-metadata address only when it was added with allow_private; the
-- worker checks the address it connects to against this at each delivery.
ALTER TABLE webhooks ADD COLUMN allow_private BOOLEAN NOT NULL DEFAULT FALSE;
