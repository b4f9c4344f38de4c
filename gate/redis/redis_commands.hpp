// The names Redis 7.0.15 knows as commands, and which of them write or may not
// be called from a script, as its COMMAND reply lists them (flags `write` and
// `noscript`). The script engine uses them to answer as Redis does for an
// unknown command, a command a script may not call, and a write inside a
// read-only script (EVAL_RO), even for commands the replica does not model.
// Sorted (byte order) for binary search.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace admit::redis::commands {

inline constexpr std::array<std::string_view, 240> redis_commands{
    "ACL", "APPEND", "ASKING", "AUTH", "BGREWRITEAOF", "BGSAVE", "BITCOUNT", "BITFIELD",
    "BITFIELD_RO", "BITOP", "BITPOS", "BLMOVE", "BLMPOP", "BLPOP", "BRPOP", "BRPOPLPUSH", "BZMPOP",
    "BZPOPMAX", "BZPOPMIN", "CLIENT", "CLUSTER", "COMMAND", "CONFIG", "COPY", "DBSIZE", "DEBUG",
    "DECR", "DECRBY", "DEL", "DISCARD", "DUMP", "ECHO", "EVAL", "EVALSHA", "EVALSHA_RO", "EVAL_RO",
    "EXEC", "EXISTS", "EXPIRE", "EXPIREAT", "EXPIRETIME", "FAILOVER", "FCALL", "FCALL_RO",
    "FLUSHALL", "FLUSHDB", "FUNCTION", "GEOADD", "GEODIST", "GEOHASH", "GEOPOS", "GEORADIUS",
    "GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO", "GEORADIUS_RO", "GEOSEARCH", "GEOSEARCHSTORE",
    "GET", "GETBIT", "GETDEL", "GETEX", "GETRANGE", "GETSET", "HDEL", "HELLO", "HEXISTS", "HGET",
    "HGETALL", "HINCRBY", "HINCRBYFLOAT", "HKEYS", "HLEN", "HMGET", "HMSET", "HRANDFIELD", "HSCAN",
    "HSET", "HSETNX", "HSTRLEN", "HVALS", "INCR", "INCRBY", "INCRBYFLOAT", "INFO", "KEYS",
    "LASTSAVE", "LATENCY", "LCS", "LINDEX", "LINSERT", "LLEN", "LMOVE", "LMPOP", "LOLWUT", "LPOP",
    "LPOS", "LPUSH", "LPUSHX", "LRANGE", "LREM", "LSET", "LTRIM", "MEMORY", "MGET", "MIGRATE",
    "MODULE", "MONITOR", "MOVE", "MSET", "MSETNX", "MULTI", "OBJECT", "PERSIST", "PEXPIRE",
    "PEXPIREAT", "PEXPIRETIME", "PFADD", "PFCOUNT", "PFDEBUG", "PFMERGE", "PFSELFTEST", "PING",
    "PSETEX", "PSUBSCRIBE", "PSYNC", "PTTL", "PUBLISH", "PUBSUB", "PUNSUBSCRIBE", "QUIT",
    "RANDOMKEY", "READONLY", "READWRITE", "RENAME", "RENAMENX", "REPLCONF", "REPLICAOF", "RESET",
    "RESTORE", "RESTORE-ASKING", "ROLE", "RPOP", "RPOPLPUSH", "RPUSH", "RPUSHX", "SADD", "SAVE",
    "SCAN", "SCARD", "SCRIPT", "SDIFF", "SDIFFSTORE", "SELECT", "SET", "SETBIT", "SETEX", "SETNX",
    "SETRANGE", "SHUTDOWN", "SINTER", "SINTERCARD", "SINTERSTORE", "SISMEMBER", "SLAVEOF",
    "SLOWLOG", "SMEMBERS", "SMISMEMBER", "SMOVE", "SORT", "SORT_RO", "SPOP", "SPUBLISH",
    "SRANDMEMBER", "SREM", "SSCAN", "SSUBSCRIBE", "STRLEN", "SUBSCRIBE", "SUBSTR", "SUNION",
    "SUNIONSTORE", "SUNSUBSCRIBE", "SWAPDB", "SYNC", "TIME", "TOUCH", "TTL", "TYPE", "UNLINK",
    "UNSUBSCRIBE", "UNWATCH", "WAIT", "WATCH", "XACK", "XADD", "XAUTOCLAIM", "XCLAIM", "XDEL",
    "XGROUP", "XINFO", "XLEN", "XPENDING", "XRANGE", "XREAD", "XREADGROUP", "XREVRANGE", "XSETID",
    "XTRIM", "ZADD", "ZCARD", "ZCOUNT", "ZDIFF", "ZDIFFSTORE", "ZINCRBY", "ZINTER", "ZINTERCARD",
    "ZINTERSTORE", "ZLEXCOUNT", "ZMPOP", "ZMSCORE", "ZPOPMAX", "ZPOPMIN", "ZRANDMEMBER", "ZRANGE",
    "ZRANGEBYLEX", "ZRANGEBYSCORE", "ZRANGESTORE", "ZRANK", "ZREM", "ZREMRANGEBYLEX",
    "ZREMRANGEBYRANK", "ZREMRANGEBYSCORE", "ZREVRANGE", "ZREVRANGEBYLEX", "ZREVRANGEBYSCORE",
    "ZREVRANK", "ZSCAN", "ZSCORE", "ZUNION", "ZUNIONSTORE",
};
inline constexpr std::array<std::string_view, 99> write_commands{
    "APPEND", "BITFIELD", "BITOP", "BLMOVE", "BLMPOP", "BLPOP", "BRPOP", "BRPOPLPUSH", "BZMPOP",
    "BZPOPMAX", "BZPOPMIN", "COPY", "DECR", "DECRBY", "DEL", "EXPIRE", "EXPIREAT", "FLUSHALL",
    "FLUSHDB", "GEOADD", "GEORADIUS", "GEORADIUSBYMEMBER", "GEOSEARCHSTORE", "GETDEL", "GETEX",
    "GETSET", "HDEL", "HINCRBY", "HINCRBYFLOAT", "HMSET", "HSET", "HSETNX", "INCR", "INCRBY",
    "INCRBYFLOAT", "LINSERT", "LMOVE", "LMPOP", "LPOP", "LPUSH", "LPUSHX", "LREM", "LSET", "LTRIM",
    "MIGRATE", "MOVE", "MSET", "MSETNX", "PERSIST", "PEXPIRE", "PEXPIREAT", "PFADD", "PFDEBUG",
    "PFMERGE", "PSETEX", "RENAME", "RENAMENX", "RESTORE", "RESTORE-ASKING", "RPOP", "RPOPLPUSH",
    "RPUSH", "RPUSHX", "SADD", "SDIFFSTORE", "SET", "SETBIT", "SETEX", "SETNX", "SETRANGE",
    "SINTERSTORE", "SMOVE", "SORT", "SPOP", "SREM", "SUNIONSTORE", "SWAPDB", "UNLINK", "XACK",
    "XADD", "XAUTOCLAIM", "XCLAIM", "XDEL", "XREADGROUP", "XSETID", "XTRIM", "ZADD", "ZDIFFSTORE",
    "ZINCRBY", "ZINTERSTORE", "ZMPOP", "ZPOPMAX", "ZPOPMIN", "ZRANGESTORE", "ZREM",
    "ZREMRANGEBYLEX", "ZREMRANGEBYRANK", "ZREMRANGEBYSCORE", "ZUNIONSTORE",
};
inline constexpr std::array<std::string_view, 41> noscript_commands{
    "AUTH", "BGREWRITEAOF", "BGSAVE", "BLMOVE", "BLPOP", "BRPOP", "BRPOPLPUSH", "BZPOPMAX",
    "BZPOPMIN", "DEBUG", "DISCARD", "EVAL", "EVALSHA", "EVALSHA_RO", "EVAL_RO", "EXEC", "FAILOVER",
    "FCALL", "FCALL_RO", "HELLO", "MONITOR", "MULTI", "PSUBSCRIBE", "PSYNC", "PUNSUBSCRIBE", "QUIT",
    "REPLCONF", "REPLICAOF", "RESET", "ROLE", "SAVE", "SHUTDOWN", "SLAVEOF", "SSUBSCRIBE",
    "SUBSCRIBE", "SUNSUBSCRIBE", "SYNC", "UNSUBSCRIBE", "UNWATCH", "WAIT", "WATCH",
};

// `upper` is a command name in upper case.
template <std::size_t n>
[[nodiscard]] constexpr bool contains(const std::array<std::string_view, n>& names,
                                      std::string_view upper) noexcept {
  return std::binary_search(names.begin(), names.end(), upper);
}

// What a script's redis.call needs to know of a command, from one search.
struct command_flags {
  bool known = false;     // in redis_commands
  bool write = false;     // in write_commands
  bool noscript = false;  // in noscript_commands
};

namespace detail {
inline constexpr auto flag_bits = [] {
  std::array<std::uint8_t, redis_commands.size()> bits{};
  for (std::size_t i = 0; i < redis_commands.size(); ++i) {
    bits[i] = static_cast<std::uint8_t>((contains(write_commands, redis_commands[i]) ? 1 : 0) |
                                        (contains(noscript_commands, redis_commands[i]) ? 2 : 0));
  }
  return bits;
}();
static_assert(std::is_sorted(redis_commands.begin(), redis_commands.end()));
static_assert(std::is_sorted(write_commands.begin(), write_commands.end()));
static_assert(std::is_sorted(noscript_commands.begin(), noscript_commands.end()));
}  // namespace detail

// `upper` is a command name in upper case.
[[nodiscard]] constexpr command_flags flags_of(std::string_view upper) noexcept {
  const auto it = std::lower_bound(redis_commands.begin(), redis_commands.end(), upper);
  if (it == redis_commands.end() || *it != upper) return {};
  const std::uint8_t bits = detail::flag_bits[static_cast<std::size_t>(it - redis_commands.begin())];
  return command_flags{true, (bits & 1) != 0, (bits & 2) != 0};
}

}  // namespace admit::redis::commands
