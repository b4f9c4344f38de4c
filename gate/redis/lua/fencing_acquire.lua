-- Lease protocol, variant `fencing`: acquire a permit and a fencing token.
--
-- The server_time acquire, plus a counter that grows by one with every grant.
-- The grant's number travels with the request; a portal (or any downstream
-- resource) that remembers the highest number it has seen can refuse a request
-- carrying a smaller one, i.e. one from a holder whose lease was reaped and
-- reassigned while it was paused or partitioned.
--
-- The counter key never expires: if it did, numbers would start again at 1
-- and a stale holder's number could look new.
--
-- KEYS[1]  gate      sorted set: token -> acquisition time (ms, server clock)
-- KEYS[2]  fence     string counter (by convention KEYS[1] .. ':fence')
-- ARGV[1]  lease_ms  how long a permit lives without a release
-- ARGV[2]  limit     most permits held at once
-- ARGV[3]  token     the caller's identity for this acquisition
--
-- Returns the fencing number (>= 1) when granted, 0 when refused.

local gate = KEYS[1]
local fence = KEYS[2]
local lease_ms = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local token = ARGV[3]

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

redis.call('ZREMRANGEBYSCORE', gate, 0, now_ms - lease_ms)

if redis.call('ZCARD', gate) >= limit then
  return 0
end

redis.call('ZADD', gate, now_ms, token)
redis.call('PEXPIRE', gate, lease_ms)
return redis.call('INCR', fence)
