// admit::redis::replica: an in-memory model of one Redis 7.0 database.
//
// Model. A keyspace of string, sorted-set and hash values, each key with an
// optional expiry deadline. It reproduces what lease-semaphore scripts use
// from Redis, with Redis 7.0's exact replies, and nothing else: sorted-set
// commands, key expiry, strings and counters, hashes, TIME and PUBLISH.
//
// Time. The replica never reads a clock. Every command takes the server's
// clock as `server_now_us`: microseconds since the Unix epoch, the value TIME
// reports. Redis keeps expiry deadlines in whole milliseconds, and so does the
// replica: its "now" for expiry is server_now_us / 1000. A key whose deadline
// is D is gone once now_ms > D (so PEXPIRE k 5 at 100 keeps k through 105).
// Expiry is lazy, as in Redis: a command that touches a key first deletes it
// if its deadline has passed. `expire_due()` runs what Redis's active expiry
// cycle would do. The server clock may jump back (a stepped clock is a fault
// the world can inject); the replica accepts that, as Redis does.
//
// Atomicity. The replica is single-threaded and a script is a plain function
// call over the typed methods below, so a script runs atomically by
// construction. One script uses one `server_now_us` throughout, which is what
// Redis 7.0 does for expiry inside a script (time is frozen at script start).
//
// Two ways in:
//  - `execute(argv, now)`: the generic entry point, parsing argv like Redis
//    and answering a `reply` shaped like RESP2 (errors included), so tests can
//    compare against a real server reply by reply.
//  - typed methods (`zadd`, `zcard`, ...): what the C++ script bodies call on
//    the hot path, with no string parsing. They throw `command_error`, carrying
//    Redis's error text, where Redis would answer an error (WRONGTYPE, an
//    INCR on a non-integer, an expiry overflow).
//
// The replica is a value type: copying it snapshots the whole keyspace.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gate/redis/hash_value.hpp"
#include "gate/redis/reply.hpp"
#include "gate/redis/sorted_set.hpp"

namespace admit::redis {

// A command Redis would refuse with an error reply; what() is the reply text,
// e.g. "WRONGTYPE Operation against a key holding the wrong kind of value".
class command_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class value_type : std::uint8_t { string, zset, hash };

// ZADD's options. NX, GT and LT exclude one another, as do NX and XX.
struct zadd_options {
  bool nx = false;  // only add new members
  bool xx = false;  // only update existing members
  bool gt = false;  // only update when the new score is greater
  bool lt = false;  // only update when the new score is less
  bool ch = false;  // count changed members in the reply, not only new ones
};

// One live key as the agreement test compares it with a real server: the same
// fields come from TYPE, PEXPIRETIME, ZRANGE 0 -1 WITHSCORES, HGETALL and GET.
struct key_dump {
  std::string key;
  value_type type = value_type::string;
  std::optional<std::int64_t> expire_at_ms;  // absolute, Unix ms (PEXPIRETIME)
  std::vector<sorted_set::entry> members;    // value_type::zset, in Redis order
  std::string value;                         // value_type::string
  std::vector<hash_value::field> fields;     // value_type::hash, in HGETALL order

  friend bool operator==(const key_dump&, const key_dump&) = default;
};

// Renders a dump as text, one key per line followed by one line per member:
//   key "gate" zset pexpireat=1700000015000
//     "t1" 1700000000000
//   key "gate:fence" string pexpireat=none "3"
//   key "gate:meta" hash pexpireat=none
//     "limit" "5"
// Scores are printed as Redis prints them. Deterministic: the same keyspace
// gives the same bytes.
[[nodiscard]] std::string render_dump(std::span<const key_dump> keys);

// Redis 7.0's text for a score in a RESP2 reply: "%.17g", integers without a
// decimal point, "inf" and "-inf".
[[nodiscard]] std::string format_score(double score);

// Where PUBLISH and SPUBLISH deliver: the subscribed clients of the world.
// Not part of the keyspace (a replica copy does not carry it). As in Redis,
// shard channels (SPUBLISH, SSUBSCRIBE) are a namespace of their own: a
// PUBLISH reaches no SSUBSCRIBE listener of the same name, and the reverse.
class pubsub {
 public:
  virtual std::int64_t publish(std::string_view channel, std::string_view message, bool sharded) = 0;

 protected:
  ~pubsub() = default;
};

namespace detail {
// The value types that are collections: a key holding one is deleted when it
// becomes empty.
template <class T>
concept collection_value = std::same_as<T, sorted_set> || std::same_as<T, hash_value>;
}  // namespace detail

class write_effects;

class replica {
 public:
  // The generic entry point: argv[0] is the command name (any case).
  // Supported (docs/redis-replica.md has the table):
  //   sorted sets: ZADD (NX XX GT LT CH INCR), ZINCRBY, ZREM, ZCARD, ZSCORE,
  //     ZRANK, ZREVRANK, ZCOUNT, ZRANGE (index ranges, BYSCORE, REV, LIMIT,
  //     WITHSCORES; not BYLEX), ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE,
  //     ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZPOPMIN, ZPOPMAX;
  //   keys: PEXPIRE, EXPIRE, PEXPIREAT, EXPIREAT (NX XX GT LT), PTTL, TTL,
  //     PEXPIRETIME, EXPIRETIME, PERSIST, DEL, EXISTS, TYPE;
  //   strings: GET, MGET, SET (NX XX GET EX PX EXAT PXAT KEEPTTL), SETEX,
  //     PSETEX, INCR, DECR, INCRBY, DECRBY;
  //   hashes: HSET, HMSET, HSETNX, HGET, HMGET, HDEL, HINCRBY, HEXISTS, HLEN,
  //     HGETALL, HKEYS, HVALS;
  //   server: TIME, PUBLISH, SPUBLISH.
  // Anything else is answered as Redis answers an unknown command; an option
  // Redis has but the replica lacks (ZRANGE BYLEX) is an error starting
  // "ERR admitsim replica:".
  // PUBLISH and SPUBLISH answer what `bus` reports (0 without a bus):
  // subscribers are the world's, not the keyspace's.
  reply execute(std::span<const std::string_view> argv, std::int64_t server_now_us,
                pubsub* bus = nullptr);
  // A command found once by name, for a caller that runs the same few
  // commands over and over (the script engine): opaque, null when the
  // replica does not model the name. execute_found(find(argv[0]), ...) gives
  // what execute(argv, ...) gives for a name find() knows.
  using command_id = const void*;
  [[nodiscard]] static command_id find(std::string_view name) noexcept;
  reply execute_found(command_id command, std::span<const std::string_view> argv, std::int64_t server_now_us,
                      pubsub* bus = nullptr);
  // The same over owned strings (views of them are passed on).
  reply execute(std::span<const std::string> argv, std::int64_t server_now_us,
                pubsub* bus = nullptr);

  // --- sorted sets ---------------------------------------------------------
  // ZADD key [options] score member: the reply's integer (new members, or
  // changed ones with `ch`).
  std::int64_t zadd(std::string_view key, double score, std::string_view member,
                    std::int64_t server_now_us, zadd_options options = {});
  std::int64_t zrem(std::string_view key, std::string_view member, std::int64_t server_now_us);
  std::int64_t zcard(std::string_view key, std::int64_t server_now_us);
  std::optional<double> zscore(std::string_view key, std::string_view member,
                               std::int64_t server_now_us);
  std::optional<std::int64_t> zrank(std::string_view key, std::string_view member,
                                    std::int64_t server_now_us);
  std::int64_t zremrangebyscore(std::string_view key, score_bound min, score_bound max,
                                std::int64_t server_now_us);
  // ZREMRANGEBYRANK key start stop (negative ranks count from the end).
  std::int64_t zremrangebyrank(std::string_view key, std::int64_t start, std::int64_t stop,
                               std::int64_t server_now_us);
  // ZCOUNT key min max.
  std::int64_t zcount(std::string_view key, score_bound min, score_bound max,
                      std::int64_t server_now_us);
  // ZINCRBY key increment member: the new score. Throws when the sum is NaN
  // (inf + -inf), leaving the set as it was.
  double zincrby(std::string_view key, double increment, std::string_view member,
                 std::int64_t server_now_us);
  std::vector<sorted_set::entry> zrangebyscore(std::string_view key, score_bound min,
                                               score_bound max, std::int64_t server_now_us);
  // The sorted set at `key` as a read command sees it (an expired key is
  // dropped first; nullptr when there is none): one lookup for an observer
  // that asks several questions at one instant. Valid until the next command.
  const sorted_set* zset_view(std::string_view key, std::int64_t server_now_us);
  // The sorted set at `key` when it is still stored but past its deadline at
  // `server_now_us` (the next command to touch the key drops it with its
  // members); nullptr otherwise. Changes nothing.
  [[nodiscard]] const sorted_set* expired_zset(std::string_view key, std::int64_t server_now_us) const;
  // The sorted set at `key` if it is stored and live at `server_now_us`
  // (nullptr when missing, of another type, or past its deadline), without
  // dropping an expired key as a command would: for an observer that must
  // change nothing. `deadline_ms`, when given, receives the key's PEXPIRE
  // deadline (-1: none).
  [[nodiscard]] const sorted_set* peek_zset(std::string_view key, std::int64_t server_now_us,
                                            std::int64_t* deadline_ms = nullptr) const;
  // The same for a value of type T (sorted_set, hash_value or std::string):
  // live, stored and of that type, else nullptr; `peek_expired`, stored and
  // past its deadline. Neither changes anything nor throws for another type.
  template <class T>
  [[nodiscard]] const T* peek(std::string_view key, std::int64_t server_now_us, std::int64_t* deadline_ms = nullptr) const;
  template <class T>
  [[nodiscard]] const T* peek_expired(std::string_view key, std::int64_t server_now_us) const;

  // --- keys ----------------------------------------------------------------
  // PEXPIRE key ttl_ms: 1 when the key exists (a ttl_ms <= 0 deletes it), else 0.
  std::int64_t pexpire(std::string_view key, std::int64_t ttl_ms, std::int64_t server_now_us);
  // PTTL: -2 when the key is missing, -1 when it has no deadline, else ms left.
  std::int64_t pttl(std::string_view key, std::int64_t server_now_us);
  // PEXPIRETIME: -2 missing, -1 no deadline, else the absolute deadline in ms.
  std::int64_t pexpiretime(std::string_view key, std::int64_t server_now_us);
  std::int64_t del(std::string_view key, std::int64_t server_now_us);
  bool exists(std::string_view key, std::int64_t server_now_us);
  // PERSIST: 1 when a deadline was removed, else 0.
  std::int64_t persist(std::string_view key, std::int64_t server_now_us);

  // --- strings -------------------------------------------------------------
  std::int64_t incr(std::string_view key, std::int64_t server_now_us);
  // INCRBY (DECRBY is INCRBY of the negation): the new value; keeps the
  // deadline; throws on a non-integer value or an overflow.
  std::int64_t incrby(std::string_view key, std::int64_t increment, std::int64_t server_now_us);
  std::optional<std::string> get(std::string_view key, std::int64_t server_now_us);
  // Plain SET: replaces any value of any type and clears the deadline.
  void set(std::string_view key, std::string_view value, std::int64_t server_now_us);

  // --- hashes --------------------------------------------------------------
  // HSET key field value: 1 when the field is new, else 0.
  std::int64_t hset(std::string_view key, std::string_view field, std::string_view value,
                    std::int64_t server_now_us);
  std::optional<std::string> hget(std::string_view key, std::string_view field,
                                  std::int64_t server_now_us);
  // HDEL key field: 1 when removed; an emptied hash deletes its key.
  std::int64_t hdel(std::string_view key, std::string_view field, std::int64_t server_now_us);
  // HINCRBY key field increment: the new value; throws on a non-integer
  // value or an overflow.
  std::int64_t hincrby(std::string_view key, std::string_view field, std::int64_t increment,
                       std::int64_t server_now_us);
  std::int64_t hlen(std::string_view key, std::int64_t server_now_us);
  // The hash at `key` as a read command sees it (nullptr when there is none;
  // throws WRONGTYPE). Valid until the next command.
  const hash_value* hash_view(std::string_view key, std::int64_t server_now_us);

  // --- the keyspace as a whole ---------------------------------------------
  // Stored keys, like DBSIZE: keys past their deadline that no command has
  // touched yet still count.
  [[nodiscard]] std::size_t key_count() const noexcept { return keys_.size(); }
  // Deletes every key past its deadline (Redis's active expiry, run to the
  // end); returns how many.
  std::size_t expire_due(std::int64_t server_now_us);
  // Live keys (deadline not passed at server_now_us) in key byte order.
  [[nodiscard]] std::vector<key_dump> dump_keys(std::int64_t server_now_us) const;
  [[nodiscard]] std::string dump(std::int64_t server_now_us) const;
  // Replaces the keyspace with `keys` (deadlines kept as given).
  void restore(std::span<const key_dump> keys);
  void clear() noexcept { keys_.clear(); }

  // While set, each of the typed writes the C++ script bodies make (zadd,
  // zrem, zremrangebyscore, pexpire, incr) is kept in `sink`, when it returns,
  // as the command that makes the same change (write_effects.hpp): how a
  // script's C++ twin (native_twins.hpp) hands its writes to a follower. The
  // script engine sets it around a twin's call only; null (the default):
  // nothing is kept.
  void set_typed_effects(write_effects* sink) noexcept { typed_effects_ = sink; }

 private:
  friend struct command_impl;

  struct stored_value {
    std::variant<std::string, sorted_set, hash_value> data;
    std::optional<std::int64_t> expire_at_ms;
  };
  using keyspace = std::map<std::string, stored_value, std::less<>>;

  // The key's value if it exists and its deadline has not passed; deletes it
  // (lazy expiry) if the deadline has passed.
  // The key's entry, or end() when it is absent or has expired (dropped then).
  keyspace::iterator find_live_entry(std::string_view key, std::int64_t server_now_us);
  stored_value* find_live(std::string_view key, std::int64_t server_now_us);
  // For T a sorted_set or a hash_value (detail::collection_value):
  // The key's T, nullptr when missing; throws WRONGTYPE for another type.
  template <detail::collection_value T>
  T* find_value(std::string_view key, std::int64_t server_now_us);
  // The key's T, created empty (without a deadline) when missing.
  template <detail::collection_value T>
  T& value_for_write(std::string_view key, std::int64_t server_now_us);
  // Deletes `key` if its value became empty, as Redis does.
  template <detail::collection_value T>
  void drop_if_empty(std::string_view key, const T& value);

  // Keeps a typed write in typed_effects_, if set.
  void note_write(std::initializer_list<std::string_view> argv);

  keyspace keys_;
  write_effects* typed_effects_ = nullptr;
};

}  // namespace admit::redis
