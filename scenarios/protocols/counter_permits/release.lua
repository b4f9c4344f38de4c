-- A permit-counter semaphore: release.
--
-- The permit goes back to the counter only if its id was still in the hash
-- (an expired permit already went back when an acquire reaped it).
--
-- KEYS[1]  the counter of free permits
-- KEYS[2]  the hash of taken permits
-- ARGV[1]  the permit id
--
-- Returns 1 when the permit was handed back, else 0.

if redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then
  redis.call('INCR', KEYS[1])
  return 1
end
return 0
