-- An expiry-scored lease semaphore: refresh.
--
-- A holder pushes its lease's end to now + lease_ms, but only while the
-- lease is still live: one that has ended is gone for good, and the caller
-- must stop working under it.
--
-- KEYS[1]  the gate's sorted set
-- ARGV[1]  lease_ms
-- ARGV[2]  token
--
-- Returns 1 when the lease was live and now ends lease_ms from now, else 0.

local gate = KEYS[1]
local lease_ms = tonumber(ARGV[1])
local token = ARGV[2]

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

local ends = redis.call('ZSCORE', gate, token)
if not ends or tonumber(ends) <= now_ms then
  redis.call('ZREM', gate, token)
  return 0
end

redis.call('ZADD', gate, 'XX', now_ms + lease_ms, token)
redis.call('PEXPIRE', gate, lease_ms)
return 1
