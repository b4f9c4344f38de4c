-- A caller-clock lease semaphore: renew.
--
-- The holder rescores its permit with its own wall clock. Permits scored at or
-- before now - lease are reaped first (by the renewing caller's clock), and a
-- permit already gone is not revived: the holder learns it lost it (0).
--
-- KEYS[1]  the gate's sorted set
-- ARGV[1]  now_ms: the caller's wall clock
-- ARGV[2]  lease_ms
-- ARGV[3]  token
--
-- Returns 1 (renewed) or 0 (the permit is gone).

local gate = KEYS[1]
local now_ms = tonumber(ARGV[1])
local lease_ms = tonumber(ARGV[2])
local token = ARGV[3]

redis.call('ZREMRANGEBYSCORE', gate, 0, now_ms - lease_ms)
if not redis.call('ZSCORE', gate, token) then
  return 0
end
redis.call('ZADD', gate, 'XX', now_ms, token)
redis.call('PEXPIRE', gate, lease_ms)
return 1
