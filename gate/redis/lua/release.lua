-- Lease protocol, variants `seed`, `server_time`, `renewal`, `fencing`:
-- release a permit.
--
-- KEYS[1]  gate   sorted set of permit holders
-- ARGV[1]  token  the holder's token
--
-- Returns 1 when the token held a permit, 0 when it did not (already
-- released, reaped after its lease, or never granted). Releasing twice is
-- harmless; a failed release is covered by the lease expiry.

return redis.call('ZREM', KEYS[1], ARGV[1])
