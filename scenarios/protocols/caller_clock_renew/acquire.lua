-- A caller-clock lease semaphore: acquire.
--
-- What most lease libraries ship: the gate is one sorted set of the holders'
-- tokens, each scored by the CALLER's wall clock at its grant or last renewal.
-- Acquire reaps every permit scored at or before the caller's now - lease and
-- grants while fewer than `limit` remain. A caller whose clock runs ahead by
-- s therefore reaps a live permit once its last renewal is older than
-- lease - s in true time (docs/sweep.md derives the largest safe s).
--
-- KEYS[1]  the gate's sorted set: token -> grant or last renewal (ms, caller's clock)
-- ARGV[1]  now_ms: the caller's wall clock
-- ARGV[2]  lease_ms: how long a permit lives without a renewal
-- ARGV[3]  limit: most permits held at once
-- ARGV[4]  token: the caller's identity for this acquisition
--
-- Returns 1 (granted) or 0 (the gate is full).

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
