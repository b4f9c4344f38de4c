-- A permit-counter semaphore: acquire.
--
-- Two keys: a counter of the permits a caller can take (a string), and a
-- hash of the permits taken, each field a permit id (the caller's token)
-- and its value the moment the permit expires (server clock, ms). The
-- counter is set to the limit by the first acquire that finds it missing.
-- Expired permits are handed back to the counter before anything is taken.
--
-- Its flaw, on purpose: a caller that retries under the same permit id (its
-- first reply was lost) takes a second permit from the counter while the
-- hash keeps one entry, so one permit is lost for good.
--
-- KEYS[1]  the counter of free permits
-- KEYS[2]  the hash of taken permits: id -> expiry (ms)
-- ARGV[1]  limit
-- ARGV[2]  lease_ms
-- ARGV[3]  the permit id (the caller's token)
--
-- Returns 1 (taken) or 0 (none free).

local free = KEYS[1]
local taken = KEYS[2]
local limit = tonumber(ARGV[1])
local lease_ms = tonumber(ARGV[2])
local id = ARGV[3]

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

if redis.call('EXISTS', free) == 0 then
  redis.call('SET', free, limit)
end

local entries = redis.call('HGETALL', taken)
for i = 1, #entries, 2 do
  if tonumber(entries[i + 1]) <= now_ms then
    redis.call('HDEL', taken, entries[i])
    redis.call('INCR', free)
  end
end

if tonumber(redis.call('GET', free)) <= 0 then
  return 0
end
redis.call('DECR', free)
redis.call('HSET', taken, id, now_ms + lease_ms)
return 1
