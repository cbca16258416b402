-- A key refresh takes the wallet's credentials back with its shares (issue 40): the bot API key
-- rotates at the commit, so the new key's hash waits beside the refreshed server key (NULL for
-- refreshes begun before this column).
ALTER TABLE key_refreshes ADD COLUMN api_key_hash BLOB;
-- A refresh supersedes the owner's enrolled kit only with the owner's approval: until when it may.
ALTER TABLE recovery_enrollments ADD COLUMN refresh_allowed_until INTEGER;
