// native_twins: the project's own lease scripts (gate/redis/lua/*.lua) run by
// their C++ bodies (lease_scripts.hpp) inside the script engine.
//
// Each shipped Lua file has a C++ twin that gives the same reply and leaves
// the same keyspace: the differential test (tests/redis/lua_differential_test)
// holds them together over generated histories, and the agreement test holds
// the Lua to a real redis-server. When a script the engine compiled is
// byte for byte one of those files (found by its SHA1), the engine may run
// the twin instead of the Lua VM, some twenty times cheaper, but only for a
// call inside the domain those tests cover:
//   - KEYS and ARGV are exactly what lua_acquire_call / lua_release_call /
//     lua_renew_call give for some arguments (the derived keys by their
//     suffixes, every number in canonical decimal from 0 to 2^53);
//   - every key holds nothing or the type the script uses (a sorted set, or a
//     counter in canonical decimal from 0 to below 2^53), so no command inside
//     the script can answer an error (the Lua reply would name the script's
//     line) and every number stays exact as a Lua double;
//   - a set the script reads into a Lua table (fair's waiters) holds at most
//     native_set_members_max members (the Lua heap limit could refuse it).
// Any other call, and every call of a user's own script, runs in Lua. What
// the engine does besides (EVAL_RO, the step and heap limits) is the engine's
// to check (script_engine::run). A twin's writes reach a follower through the
// replica's typed methods (replica::set_typed_effects): not the commands the
// Lua would send, but commands that leave the follower as the primary.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/reply.hpp"

namespace admit::redis {

class replica;

// The largest set the twin reads whole where the Lua builds a table of it.
inline constexpr std::int64_t native_set_members_max = 10'000;

struct native_twin {
  variant v;  // a variant whose script this file is (one of them, for a file several share)
  script_op op;
  friend bool operator==(const native_twin&, const native_twin&) = default;
};

// The twin of the shipped script whose SHA1 (40 lower-case hex digits) is `sha`, or nullopt.
[[nodiscard]] std::optional<native_twin> native_twin_of(std::string_view sha);

// The twin's reply for EVAL of its script with `keys` and `args` at `server_now_us`, having
// changed `data` as the script would; nullopt, with `data` untouched, when the call is outside
// the domain above (the caller runs the Lua).
[[nodiscard]] std::optional<reply> run_native_twin(replica& data, native_twin twin, std::span<const std::string> keys,
                                                   std::span<const std::string> args, std::int64_t server_now_us);

}  // namespace admit::redis
