-- An expiry-scored lease semaphore: acquire.
--
-- The gate is one sorted set whose members are the holders' tokens, each
-- scored by the moment its lease ends (server clock, ms). That makes reaping
-- a single range from the far past to now: whatever has ended goes, however
-- long ago, and a member scored in the future is live by definition.
--
-- KEYS[1]  the gate's sorted set
-- ARGV[1]  lease_ms: how long a lease lasts without a refresh
-- ARGV[2]  limit: most leases live at once
-- ARGV[3]  token: the caller's identity for this acquisition
--
-- Returns 1 when the caller holds a lease, 0 when the gate is full.

local gate = KEYS[1]
local lease_ms = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local token = ARGV[3]

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

-- Every lease that ended at or before now: from -inf, so no score is too old.
redis.call('ZREMRANGEBYSCORE', gate, '-inf', now_ms)

if redis.call('ZCARD', gate) >= limit then
  return 0
end

redis.call('ZADD', gate, now_ms + lease_ms, token)
-- The key outlives its longest lease, and an idle gate goes away by itself.
redis.call('PEXPIRE', gate, lease_ms)
return 1
