-- unreaped (tests/cli/confirm_test.sh): admits below the limit counting only live permits (scored by acquisition
-- time), and reaps nothing: expired permits stay in the set.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = redis.call('ZCOUNT', KEYS[1], now - tonumber(ARGV[1]), '+inf')
if live >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[3])
return 1
