-- Lease protocol, variant `fair`: acquire a permit in arrival order.
--
-- Problem. With the other variants a permit freed by a release goes to
-- whichever worker happens to poll next, so a worker can starve behind luckier
-- pollers. Here waiters form a queue at the server and a free permit goes to
-- the longest-waiting live waiter.
--
-- State (all keys of one gate; KEYS[2..4] are by convention KEYS[1] with the
-- suffixes ':queue', ':seen', ':ticket'):
--   gate    sorted set  token -> time of grant or refresh (ms, server clock)
--   queue   sorted set  token -> ticket: the waiter's place in line
--   seen    sorted set  token -> time of the waiter's last poll (ms, server)
--   ticket  string      counter handing out tickets; never expires, so
--                       tickets only grow and arrival order is total
-- queue and seen always hold the same tokens: every step below adds or
-- removes a waiter in both.
--
-- One call = one poll by one waiter:
--   1. now = TIME (the server's clock, as in `server_time`).
--   2. Reap holders whose lease ran out (scores 0 .. now - lease_ms).
--   3. Reap stale waiters: a waiter that has not polled for queue_timeout_ms
--      (last poll <= now - queue_timeout_ms) has crashed, been partitioned or
--      given up, and must not block the line forever. It leaves both queue and
--      seen. A live waiter therefore polls more often than queue_timeout_ms.
--   4. A caller that already holds a permit (a retry whose earlier reply was
--      lost) is granted again: its lease restarts from now, as a grant promises.
--   5. A caller not yet in line takes the next ticket; every caller records
--      `now` as its last poll.
--   6. free = limit - holders. The caller is admitted iff its rank in the
--      queue is < free, i.e. it is among the first `free` live waiters:
--      nobody behind it can take a permit it is owed. Admission moves it from
--      queue/seen to gate and pushes the gate's expiry out by lease_ms.
--   7. Otherwise it keeps its place; queue and seen expire queue_timeout_ms
--      after this poll, so a line nobody polls any more disappears (by then
--      every entry in it is stale anyway).
-- Limits: step 3 costs one ZREM per stale waiter, each reaped once. A waiter
-- that stops polling holds up the line for at most queue_timeout_ms. A waiter
-- that gives up should call fair_release.lua to leave the line at once.
--
-- KEYS[1] gate  KEYS[2] queue  KEYS[3] seen  KEYS[4] ticket
-- ARGV[1] lease_ms  ARGV[2] limit  ARGV[3] token  ARGV[4] queue_timeout_ms
--
-- Returns 1 (granted) or 0 (waiting: poll again before queue_timeout_ms).

local gate = KEYS[1]
local queue = KEYS[2]
local seen = KEYS[3]
local ticket = KEYS[4]
local lease_ms = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local token = ARGV[3]
local queue_timeout_ms = tonumber(ARGV[4])

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

redis.call('ZREMRANGEBYSCORE', gate, 0, now_ms - lease_ms)

local stale = redis.call('ZRANGEBYSCORE', seen, '-inf', now_ms - queue_timeout_ms)
for i = 1, #stale do
  redis.call('ZREM', queue, stale[i])
end
redis.call('ZREMRANGEBYSCORE', seen, '-inf', now_ms - queue_timeout_ms)

if redis.call('ZSCORE', gate, token) then
  redis.call('ZADD', gate, now_ms, token)
  redis.call('PEXPIRE', gate, lease_ms)
  return 1
end

if not redis.call('ZSCORE', queue, token) then
  redis.call('ZADD', queue, redis.call('INCR', ticket), token)
end
redis.call('ZADD', seen, now_ms, token)

local free = limit - redis.call('ZCARD', gate)
if redis.call('ZRANK', queue, token) < free then
  redis.call('ZREM', queue, token)
  redis.call('ZREM', seen, token)
  redis.call('ZADD', gate, now_ms, token)
  redis.call('PEXPIRE', gate, lease_ms)
  return 1
end

redis.call('PEXPIRE', queue, queue_timeout_ms)
redis.call('PEXPIRE', seen, queue_timeout_ms)
return 0
