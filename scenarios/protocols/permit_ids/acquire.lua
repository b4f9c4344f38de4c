-- A counter-plus-hash semaphore whose permits have ids: acquire.
--
-- Three keys: a counter of the permits a caller can take (a string, created
-- by the protocol's set-up step, never here), a hash of the permits taken
-- (field: the permit's id; value: when it expires, server clock, ms), and a
-- counter the ids are drawn from. Expired permits go back to the counter
-- before anything is taken. A granted caller gets the new permit's id, a
-- bulk string, and gives it back to release.
--
-- With no counter (the set-up never ran, or a restart without persistence
-- wiped it) nothing is free: the script refuses, for ever if nothing sets
-- it up again.
--
-- KEYS[1]  the counter of free permits
-- KEYS[2]  the hash of taken permits: id -> expiry (ms)
-- KEYS[3]  the id counter
-- ARGV[1]  lease_ms
--
-- Returns the permit's id ("p<n>"), or nil (false) when none is free.

local free_key, taken_key, ids_key = KEYS[1], KEYS[2], KEYS[3]
local lease_ms = tonumber(ARGV[1])

local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local free = tonumber(redis.call('GET', free_key))
if free == nil then
  return false
end

local taken = redis.call('HGETALL', taken_key)
for i = 1, #taken, 2 do
  if tonumber(taken[i + 1]) <= now_ms then
    redis.call('HDEL', taken_key, taken[i])
    free = redis.call('INCR', free_key)
  end
end

if free <= 0 then
  return false
end
redis.call('DECR', free_key)
local id = 'p' .. redis.call('INCR', ids_key)
redis.call('HSET', taken_key, id, now_ms + lease_ms)
return id
