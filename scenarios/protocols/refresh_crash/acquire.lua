-- Lease protocol `refresh_crash`: acquire a permit.
--
-- One sorted set per gate; each member is a holder's token scored by the
-- moment its lease ends, on the server's clock (TIME). Whatever has ended is
-- dropped first; then the caller is admitted while fewer than `limit` remain.
--
-- KEYS[1]  gate      sorted set: token -> end of lease (ms, server clock)
-- ARGV[1]  lease_ms  how long a permit lives without a refresh
-- ARGV[2]  limit     most permits held at once
-- ARGV[3]  token     the caller's identity for this acquisition
--
-- Returns 1 (granted) or 0 (the gate is full).

local gate = KEYS[1]
local lease_ms = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local token = ARGV[3]

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

redis.call('ZREMRANGEBYSCORE', gate, '-inf', now_ms)
if redis.call('ZCARD', gate) >= limit then
  return 0
end
redis.call('ZADD', gate, now_ms + lease_ms, token)
redis.call('PEXPIRE', gate, lease_ms)
return 1
