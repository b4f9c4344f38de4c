// The fleet-wide lease semaphore's scripts, in C++ over the replica and in
// Lua for a real Redis.
//
// Protocol. A gate is one sorted set in Redis: one member per permit holder
// (its token), scored by the time the permit was taken. Acquire is one atomic
// script: forget permits older than the lease, then grant while fewer than
// `limit` remain (add the token, push the key's expiry out by the lease).
// Release removes the token. Workers poll acquire until granted or until their
// own acquire timeout.
//
// Variants, selectable per scenario so runs can compare them:
//   seed         the design document's script: `now` is the caller's clock.
//   server_time  `now` is read with TIME inside the script (the server clock).
//   renewal      server_time, plus renew(): a holder extends its lease and
//                learns (reply 0) when it has already lost it.
//   fencing      server_time, and each grant returns a number from a counter
//                that only grows, for a downstream resource to check.
//   fair         waiters queue at the server and are admitted in arrival
//                order; stale waiters leave the queue after a timeout.
// The Lua files under gate/redis/lua/ carry the exact step lists.
//
// Each script exists twice: a C++ body over `replica` (what the simulator
// runs, millions of times) and a Lua file (what a real Redis runs). The two
// give identical replies and leave identical state; the integration test in
// tests/integration proves it against redis-server. A C++ body calls the
// replica's typed commands in the same order as the Lua file calls redis.call,
// with the same numbers: Lua numbers are doubles, and so are the C++ scores
// and bounds, computed the same way.
//
// Keys. The gate key is the caller's; the others derive from it by suffix
// (`lease_keys`). In a Redis Cluster, put a hash tag in the gate key
// ("{sos:de}:inflight") so all of a gate's keys share a slot.
//
// Time. `server_now_us` is the Redis server's clock (see replica.hpp). Only
// `seed` uses the caller's clock (`acquire_args::now_ms`), for its scores and
// its reaping; key expiry always runs on the server's clock.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gate/redis/replica.hpp"

namespace admit::redis {

enum class variant : std::uint8_t { seed, server_time, renewal, fencing, fair };

inline constexpr std::array<variant, 5> all_variants{variant::seed, variant::server_time,
                                                     variant::renewal, variant::fencing,
                                                     variant::fair};

[[nodiscard]] std::string_view to_string(variant v) noexcept;
[[nodiscard]] std::optional<variant> parse_variant(std::string_view name) noexcept;

// Whether the variant has a renew script.
[[nodiscard]] constexpr bool has_renew(variant v) noexcept { return v == variant::renewal; }

// Numbers cross into Lua as doubles; the scripts are exact while every number
// stays within +-2^53 (ms timestamps reach 2^53 in the year 287,396).
inline constexpr std::int64_t max_exact_number = std::int64_t{1} << 53;

struct acquire_args {
  std::string_view key;    // the gate's sorted set (KEYS[1]); other keys derive from it
  std::string_view token;  // the caller's identity for this acquisition attempt
  std::int64_t now_ms = 0;            // the caller's wall clock; read by `seed` only
  std::int64_t lease_ms = 0;          // permit lifetime without release (or renewal)
  std::int64_t limit = 0;             // most permits held at once
  std::int64_t queue_timeout_ms = 0;  // `fair`: a waiter silent this long leaves the queue
};

struct release_args {
  std::string_view key;
  std::string_view token;
};

struct renew_args {
  std::string_view key;
  std::string_view token;
  std::int64_t lease_ms = 0;
};

// What a script returned: an integer (1/0, a fencing number) or an error.
struct script_reply {
  std::int64_t value = 0;
  std::string error;  // empty unless a command inside the script failed

  [[nodiscard]] bool ok() const noexcept { return error.empty(); }
  // A grant: 1 from most acquires, the fencing number (>= 1) from `fencing`.
  [[nodiscard]] bool granted() const noexcept { return ok() && value > 0; }

  friend bool operator==(const script_reply&, const script_reply&) = default;
};

// The RESP reply EVAL would give: an integer, or an error.
[[nodiscard]] reply to_reply(const script_reply& r);

// The C++ script bodies. Each runs atomically (a plain call) at server time
// `server_now_us`. A command error inside a script ends it with that error,
// and like Redis keeps what the script wrote before the error.
script_reply run_acquire(replica& r, variant v, const acquire_args& args,
                         std::int64_t server_now_us);
script_reply run_release(replica& r, variant v, const release_args& args,
                         std::int64_t server_now_us);
// Only for variants with has_renew(v).
script_reply run_renew(replica& r, variant v, const renew_args& args, std::int64_t server_now_us);

// The keys of one gate.
struct lease_keys {
  std::string gate;    // permit holders
  std::string fence;   // `fencing`: grant counter
  std::string queue;   // `fair`: waiters by ticket
  std::string seen;    // `fair`: waiters by last poll
  std::string ticket;  // `fair`: ticket counter
};
[[nodiscard]] lease_keys keys_for(std::string_view gate_key);

// --- The Lua side ---------------------------------------------------------

enum class script_op : std::uint8_t { acquire, release, renew };
// "acquire", "release" or "renew", as reports and sentences name the operation.
constexpr const char* script_op_name(script_op op) noexcept {
  return op == script_op::acquire ? "acquire" : op == script_op::release ? "release" : "renew";
}

// File name under lua_dir() of a variant's script, e.g. "seed_acquire.lua".
[[nodiscard]] std::string_view lua_file(variant v, script_op op);
// The directory holding the Lua files in the source tree (ADMITSIM_LUA_DIR).
[[nodiscard]] std::string_view lua_dir() noexcept;
// The Lua source compiled into the library (the same bytes as the file at
// build time, so a binary does not depend on the source tree at run time).
[[nodiscard]] std::string_view lua_source(variant v, script_op op);
// Every embedded Lua file by name, in name order.
struct embedded_lua {
  std::string_view file;
  std::string_view source;
};
[[nodiscard]] std::span<const embedded_lua> embedded_lua_files() noexcept;
// Every embedded protocol file of gate/redis/protocols (the built-in
// variants'), by name, in name order: `file` its name, `source` its JSON.
[[nodiscard]] std::span<const embedded_lua> embedded_protocol_files() noexcept;

// EVAL's KEYS and ARGV for a call: what a client sends to run the Lua script
// that matches run_acquire / run_release / run_renew with the same arguments.
struct lua_call {
  std::string_view file;
  std::vector<std::string> keys;
  std::vector<std::string> argv;
};
[[nodiscard]] lua_call lua_acquire_call(variant v, const acquire_args& args);
[[nodiscard]] lua_call lua_release_call(variant v, const release_args& args);
[[nodiscard]] lua_call lua_renew_call(variant v, const renew_args& args);

}  // namespace admit::redis
