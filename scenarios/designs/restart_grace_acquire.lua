-- Lease protocol `restart_grace`: acquire a permit, but grant nothing for one
-- lease after the node came up without its old state.
--
-- A Redis that restarts without persistence forgets every permit while their
-- holders still work at the portal; an acquire that granted at once would
-- hand the same slots out again. Beside the set this script keeps a marker
-- key: the server time (ms) at which the node was first seen by an acquire.
-- A missing marker means the node has no state from before (a first start, or
-- a restart that lost it): the script sets it and refuses. It grants only from
-- marker + lease on, when every permit the node may have forgotten has run
-- out (a holder whose request outlasts its lease is another fault: renewal).
-- Everything is on the server's clock (TIME), so no caller's clock can shorten
-- the grace. The marker has no expiry: it must outlive every lease.
--
-- What it cannot see: a restart that keeps the marker but loses recent grants
-- (appendfsync everysec losing its last second) looks like no restart at all.
--
-- KEYS[1]  gate      sorted set: token -> acquisition time (ms, server clock)
-- KEYS[2]  marker    string: when this node's state began (ms, server clock)
-- ARGV[1]  lease_ms  how long a permit lives without a release
-- ARGV[2]  limit     most permits held at once
-- ARGV[3]  token     the caller's identity for this acquisition
--
-- Returns 1 (granted) or 0 (refused: in the grace, or the gate is full).

local gate = KEYS[1]
local marker = KEYS[2]
local lease_ms = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local token = ARGV[3]

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

local up = redis.call('GET', marker)
if not up then
  redis.call('SET', marker, now_ms)
  return 0
end
if now_ms < tonumber(up) + lease_ms then
  return 0
end

redis.call('ZREMRANGEBYSCORE', gate, 0, now_ms - lease_ms)

if redis.call('ZCARD', gate) >= limit then
  return 0
end

redis.call('ZADD', gate, now_ms, token)
redis.call('PEXPIRE', gate, lease_ms)
return 1
