-- Lease protocol, variant `fair`: release a permit, or leave the line.
--
-- A holder releases its permit; a waiter that gives up (its acquire timeout
-- expired) leaves the queue at once instead of blocking it until its entry
-- goes stale. Both are the same call: the token is removed everywhere.
--
-- KEYS[1] gate  KEYS[2] queue  KEYS[3] seen   (see fair_acquire.lua)
-- ARGV[1] token
--
-- Returns 1 when the token held a permit, 0 otherwise.

local token = ARGV[1]
local held = redis.call('ZREM', KEYS[1], token)
redis.call('ZREM', KEYS[2], token)
redis.call('ZREM', KEYS[3], token)
return held
