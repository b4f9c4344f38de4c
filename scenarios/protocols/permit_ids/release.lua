-- A counter-plus-hash semaphore whose permits have ids: release.
--
-- The permit goes back to the counter only if its id is still taken (an
-- expired one went back when an acquire reaped it).
--
-- KEYS[1]  the counter of free permits
-- KEYS[2]  the hash of taken permits
-- ARGV[1]  the permit's id, as acquire answered it
--
-- Returns 1 when the permit went back, else 0.

if redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then
  redis.call('INCR', KEYS[1])
  return 1
end
return 0
