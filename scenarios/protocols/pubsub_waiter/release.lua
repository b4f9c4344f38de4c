-- A waiter woken by pub/sub: release.
--
-- Removes the caller's permit and, when it held one, tells the waiters on
-- the shard channel KEYS[2] that a permit is free. A waiter that is not
-- listening at that instant (between two attempts, or cut off) misses the
-- message and waits out its retry delay.
--
-- KEYS[1]  the holders
-- KEYS[2]  the release channel
-- ARGV[1]  the caller's token
--
-- Returns 1 when a permit was freed, else 0.

if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('SPUBLISH', KEYS[2], 'free')
  return 1
end
return 0
