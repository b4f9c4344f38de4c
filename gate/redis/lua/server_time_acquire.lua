-- Lease protocol, variants `server_time` and `renewal`: acquire a permit.
--
-- The seed's acquire with one change: `now` is the Redis server's clock, read
-- with TIME inside the script, never a value the caller passes. Every permit is
-- then scored on one clock, so a worker with a skewed clock can neither reap
-- live permits early nor keep stale ones alive. (Redis 7 replicates a script
-- by its effects, so a script may call TIME and still write afterwards.)
--
-- KEYS[1]  gate      sorted set: token -> acquisition time (ms, server clock)
-- ARGV[1]  lease_ms  how long a permit lives without a release (or renewal)
-- ARGV[2]  limit     most permits held at once
-- ARGV[3]  token     the caller's identity for this acquisition
--
-- Returns 1 (granted) or 0 (refused: the gate is full).

local gate = KEYS[1]
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
return 1
