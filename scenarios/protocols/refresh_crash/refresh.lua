-- Lease protocol `refresh_crash`: refresh a held permit.
--
-- A holder pushes the end of its lease one lease past now, if its permit is
-- still in the set and has not ended; otherwise it has lost the permit.
--
-- KEYS[1]  gate      sorted set: token -> end of lease (ms, server clock)
-- ARGV[1]  lease_ms  how long the refreshed permit lives
-- ARGV[2]  token     the holder's token
--
-- Returns 1 (still held, refreshed) or 0 (lost).

local gate = KEYS[1]
local lease_ms = tonumber(ARGV[1])
local token = ARGV[2]

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

local ends = redis.call('ZSCORE', gate, token)
if not ends or tonumber(ends) <= now_ms then
  return 0
end
redis.call('ZADD', gate, 'XX', now_ms + lease_ms, token)
if redis.call('PTTL', gate) < lease_ms then
  redis.call('PEXPIRE', gate, lease_ms)
end
return 1
