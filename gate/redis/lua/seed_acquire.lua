-- Lease protocol, variant `seed`: acquire a permit.
--
-- The acquire of the fleet-wide semaphore exactly as its design document
-- specifies it. The gate is one sorted set: a member per permit holder (its
-- token), scored by the time the permit was taken. The score is the CALLER's
-- wall clock, passed in ARGV, so a worker whose clock runs ahead reaps other
-- workers' live permits: the flaw this variant exists to show.
--
-- KEYS[1]  gate     sorted set: token -> acquisition time (ms, caller's clock)
-- ARGV[1]  now_ms   the caller's wall clock, milliseconds
-- ARGV[2]  lease_ms how long a permit lives without a release
-- ARGV[3]  limit    most permits held at once
-- ARGV[4]  token    the caller's identity for this acquisition
--
-- Returns 1 (granted) or 0 (refused: the gate is full).
-- Steps: forget permits taken at or before now - lease_ms (scores 0 .. now -
-- lease_ms, both ends inclusive); if fewer than `limit` remain, add the token
-- at `now` and push the whole key's expiry to lease_ms from now (the server's
-- clock), so an idle gate disappears on its own.

local gate = KEYS[1]
local now_ms = tonumber(ARGV[1])
local lease_ms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local token = ARGV[4]

redis.call('ZREMRANGEBYSCORE', gate, 0, now_ms - lease_ms)

if redis.call('ZCARD', gate) >= limit then
  return 0
end

redis.call('ZADD', gate, now_ms, token)
redis.call('PEXPIRE', gate, lease_ms)
return 1
