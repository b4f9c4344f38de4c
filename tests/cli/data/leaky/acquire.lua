-- A lease semaphore scored by expiry, whose permits outlast their work by far:
-- each is scored to expire a thousand leases after it is granted, and (see
-- release.lua) no release removes it. Expired members are reaped; live ones
-- are counted against the limit.
--
-- KEYS[1]  the holders (member: token; score: expiry, server clock, ms)
-- ARGV[1]  lease_ms   ARGV[2]  limit   ARGV[3]  token
-- Returns 1 when granted, else 0.
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now_ms + 1000 * tonumber(ARGV[1]), ARGV[3])
  return 1
end
return 0
