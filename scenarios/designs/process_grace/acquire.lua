-- Lease protocol `process_grace`: acquire a permit, but grant nothing for one
-- lease after the process serving the gate changed.
--
-- A restart (whatever its persistence kept) and a failover (whatever the
-- replica had applied) both put a new process in front of the set, and both
-- can forget permits whose holders still work at the portal. What survives
-- neither is the set's own record of them; what every new process has is a
-- new run id, which INFO server reports. Beside the set this script keeps a
-- hash: the run id of the process that last served an acquire and the server
-- time (ms) at which that process was first seen. An acquire run by another
-- process (or that finds no hash: the data was lost too) records itself and
-- refuses; acquires of the same process refuse until one lease after that
-- first sight. Every permit the change may have forgotten was granted
-- before it, so it has run out by then (a holder whose request outlasts its
-- lease is another fault: renewal).
--
-- The hash is data like any other: a restart may roll it back and a
-- failover may lose its last write, but what comes back can only name an
-- earlier process, never the one now serving, so the grace starts again.
-- Everything is on the server's clock (TIME); a new process whose clock runs
-- behind the old one's shortens the grace by that much.
--
-- KEYS[1]  gate      sorted set: token -> acquisition time (ms, server clock)
-- KEYS[2]  process   hash: run_id, since (ms, server clock)
-- ARGV[1]  lease_ms  how long a permit lives without a release
-- ARGV[2]  limit     most permits held at once
-- ARGV[3]  token     the caller's identity for this acquisition
--
-- Returns 1 (granted) or 0 (refused: in the grace, or the gate is full).

local gate = KEYS[1]
local process = KEYS[2]
local lease_ms = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local token = ARGV[3]

local info = redis.call('INFO', 'server')
local run_id = string.match(info, 'run_id:(%x+)')
if not run_id then
  return redis.error_reply('process_grace: INFO server reported no run_id')
end

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

-- Reaping first: a permit past its lease is over whichever process serves.
redis.call('ZREMRANGEBYSCORE', gate, 0, now_ms - lease_ms)

local seen = redis.call('HMGET', process, 'run_id', 'since')
if seen[1] ~= run_id then
  redis.call('HSET', process, 'run_id', run_id, 'since', now_ms)
  return 0
end
if now_ms < tonumber(seen[2]) + lease_ms then
  return 0
end

if redis.call('ZCARD', gate) >= limit then
  return 0
end

redis.call('ZADD', gate, now_ms, token)
redis.call('PEXPIRE', gate, lease_ms)
return 1
