-- Lease protocol, variant `renewal`: extend a held permit.
--
-- A holder whose work may outlast its lease renews periodically (well inside
-- lease_ms). Renewal moves the permit's score to the server's current time, so
-- the reaper sees it as fresh, and pushes the gate key's expiry out again.
-- A permit whose lease has already run out is reaped first and NOT revived:
-- once a lease has expired another worker may legitimately hold the slot, so
-- the holder must learn that it lost the permit (reply 0) and stop.
--
-- KEYS[1]  gate      sorted set: token -> last grant or renewal (ms, server clock)
-- ARGV[1]  lease_ms  the lease length (the same for every worker of a gate)
-- ARGV[2]  token     the holder's token
--
-- Returns 1 (renewed) or 0 (the permit is gone).

local gate = KEYS[1]
local lease_ms = tonumber(ARGV[1])
local token = ARGV[2]

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

redis.call('ZREMRANGEBYSCORE', gate, 0, now_ms - lease_ms)

if not redis.call('ZSCORE', gate, token) then
  return 0
end

redis.call('ZADD', gate, 'XX', now_ms, token)
redis.call('PEXPIRE', gate, lease_ms)
return 1
