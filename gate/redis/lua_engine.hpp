// admit::redis::script_engine: Lua 5.1 with Redis 7.0's scripting
// environment, running over a replica.
//
// Model. One Lua state, as in Redis, holding every cached script. A script is
// compiled once (SCRIPT LOAD, or the first EVAL of its body) and cached by
// the SHA-1 of its body. A call sets the globals KEYS and ARGV, runs the
// script to the end and turns its return value into a RESP2 reply. Inside,
// redis.call / redis.pcall send commands to the replica with the call's one
// `server_now_us` (time is frozen for a script, as in Redis 7.0), and their
// replies come back as Lua values. A script is one function call on one
// thread, so it is atomic; a script that fails keeps what it wrote before
// the error, as in Redis.
//
// Redis 7.0.15 is the reference: the libraries it loads (base without
// print/dofile/loadfile/setfenv/getfenv/newproxy, table, string, math,
// coroutine, cjson, bit), the redis.* API, the reply conversions both ways,
// the read-only globals and their error texts, math.random's generator and
// the exact error replies (" script: <sha>, on @user_script:<line>.").
// docs/lua-engine.md lists what differs (struct, cmsgpack, RESP3, ...).
//
// Bounds. Every call is bounded in Lua VM instructions (`max_steps`, counted
// by a hook every 1000 instructions) and the state's heap is bounded
// (`max_memory_bytes`, enforced by the allocator). Reaching either ends the
// call with an error reply starting "ERR admitsim:" and is recorded in
// last_error(); the state stays usable for the next call.
//
// Lua raises errors with longjmp. Every C function the engine gives Lua does
// its C++ work first, in a frame of its own that ends before any Lua API call
// that can raise, and no C++ exception ever crosses a Lua frame.
//
// Determinism: the same calls in the same order give the same replies. The
// engine holds no clock and no hidden randomness; math.random is Redis's
// lrand48 generator, whose state lives in the engine (SCRIPT FLUSH keeps it,
// as Redis keeps its own). Numbers print in the "C" locale whatever the
// process's locale.
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gate/redis/native_twins.hpp"
#include "gate/redis/replica.hpp"
#include "gate/redis/reply.hpp"
#include "gate/redis/server_info.hpp"

struct lua_State;

namespace admit::redis {

class write_effects;

struct script_limits {
  std::uint64_t max_steps = 100'000'000;     // Lua VM instructions per script call (checked every 1000)
  std::size_t max_memory_bytes = 256u << 20;  // the Lua state's heap (the allocator refuses past it)
};

// Why the last script call failed, for a report: which script, the Lua error
// and line, the command that raised it.
struct script_error_info {
  std::string sha;          // the script's SHA-1 (hex)
  std::string message;      // the Lua error as Redis reports it (the error reply's text)
  int line = 0;             // the script line, 0 when unknown
  std::string command;      // the redis.call that raised it, e.g. "ZADD" ("" when not a command's)
  bool step_limit = false;  // stopped by max_steps (a real Redis would answer BUSY to everyone else)
  bool memory_limit = false;
};

// A cached script for the simulator's hot path: calling by handle skips
// hashing the body and looking up its SHA. A handle stays valid until
// script_flush(); after that, call() answers NOSCRIPT.
struct script_handle {
  std::uint32_t index = 0;
  std::uint32_t generation = 0;  // 0: no script (a body that did not compile)

  [[nodiscard]] bool valid() const noexcept { return generation != 0; }
};

class script_engine {
 public:
  explicit script_engine(replica& data, script_limits limits = {});
  ~script_engine();
  script_engine(const script_engine&) = delete;
  script_engine& operator=(const script_engine&) = delete;

  // SCRIPT LOAD: compiles and caches; the reply is the SHA (bulk) or the
  // compile error, as Redis gives them.
  reply script_load(std::string_view body);
  reply eval(std::string_view body, std::span<const std::string> keys,
             std::span<const std::string> args, std::int64_t server_now_us);
  reply evalsha(std::string_view sha, std::span<const std::string> keys,
                std::span<const std::string> args, std::int64_t server_now_us);
  [[nodiscard]] bool script_exists(std::string_view sha) const;
  // A Redis restart (or SCRIPT FLUSH) loses the cache: EVALSHA then answers
  // NOSCRIPT. The Lua state is rebuilt, as Redis rebuilds it.
  void script_flush();

  // The generic entry point: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO,
  // SCRIPT LOAD|EXISTS|FLUSH; every other command goes to replica::execute.
  reply execute(std::span<const std::string> argv, std::int64_t server_now_us);

  // The hot path: compile (or find) a body once, then call it by handle. An
  // invalid handle (compile error) is answered by call() with the compile
  // error; last_error() has it too.
  script_handle load_handle(std::string_view body);
  reply call(script_handle handle, std::span<const std::string> keys,
             std::span<const std::string> args, std::int64_t server_now_us);

  [[nodiscard]] const script_error_info& last_error() const noexcept { return last_error_; }
  // Where PUBLISH (from a script or as a command) delivers: the subscribed
  // clients of the world. Without one, PUBLISH answers 0.
  void set_pubsub(pubsub* bus) noexcept { bus_ = bus; }
  // The process INFO server describes (server_info.hpp), from a script or as
  // a command. Without one, INFO server is an error reply.
  void set_server_facts(const server_facts* facts) noexcept { facts_ = facts; }
  // Where the write commands applied from now on are kept, as a replica
  // applies them (write_effects.hpp): each write a script's redis.call or
  // redis.pcall applied, and each write command given to execute(). Null
  // (the default): none is kept.
  void set_effects(write_effects* sink) noexcept;
  // Whether a call of one of the project's own lease scripts may run its C++
  // twin instead of the Lua VM (native_twins.hpp; on by default). The twin
  // runs only where it answers and writes exactly as the Lua does: never for
  // EVAL_RO or under limits below the defaults; with an effects sink its
  // writes are kept as the commands that make them. Off: every script runs
  // in Lua (the tests compare the two).
  void set_native_twins(bool on) noexcept { native_twins_ = on; }
  // How many calls their twin answered (the tests check that the domain is reached).
  [[nodiscard]] std::uint64_t native_twin_calls() const noexcept { return native_twin_calls_; }
  // VM instructions of the last call, to the hook's granularity (1000).
  [[nodiscard]] std::uint64_t steps_of_last_call() const noexcept { return steps_; }
  // Bytes the Lua state holds on its heap now.
  [[nodiscard]] std::size_t lua_heap_bytes() const noexcept;

  // A guard for the tests only: converts a script's numbers to integers by
  // rounding instead of truncating (a deliberately wrong conversion), so a
  // test can show that the agreement property notices. Never set otherwise.
  void set_broken_number_conversion_for_tests(bool on) noexcept { broken_number_conversion_ = on; }

  // Internal: the state shared with the C functions given to Lua (defined in
  // lua_engine.cpp). Public only so that those functions, which have C
  // linkage requirements, can reach it.
  struct lua_side;

  // Internal, public for the same reason: one of a script's kept tables.
  // `ref` is the table given to the script and `anchor_ref` a table of the
  // same strings, never given to a script, which keeps them alive, so
  // `entries` (views of the Lua strings at 1..count) stay valid. -2
  // (LUA_NOREF): none.
  struct kept_table {
    int ref = -2;
    int anchor_ref = -2;
    std::size_t count = 0;
    std::vector<std::string_view> entries;
  };

 private:
  struct cached_script {
    std::string sha;
    int function_ref = 0;  // the compiled chunk in the Lua registry
    // The KEYS (0) and ARGV (1) tables of this script's last call, which
    // the next call reuses when the script left them as given (see
    // set_keys_and_argv in lua_engine.cpp).
    kept_table kept[2];
    std::optional<native_twin> twin;  // the shipped script it is, if any (native_twins.hpp)
  };

  void open_state();
  void close_state() noexcept;
  // Finds or compiles a body; false (and `compile_error_`) on a compile error.
  bool find_or_compile(std::string_view body, std::string_view sha, std::size_t& index);
  reply run(std::size_t index, std::span<const std::string> keys, std::span<const std::string> args,
            std::int64_t server_now_us, bool read_only);
  reply eval_command(std::span<const std::string> argv, std::int64_t server_now_us, bool by_sha,
                     bool read_only);
  reply script_command(std::span<const std::string> argv);
  reply fail(std::string sha, std::string message);
  // NOSCRIPT for `sha` (probed: a client's EVALSHA met a cache that lost its script).
  reply noscript(std::string sha);
  // The SHA1 of a script body, in hex: remembered for the last few bodies, since a body EVAL'd
  // again (a client's EVAL, a follower replaying the primary's) costs a byte comparison instead of
  // a digest (SHA1 of a 3 KB script is some 77,000 instructions; comparing it, a few hundred).
  const std::string& sha_of(std::string_view body);
  // Releases a script's kept KEYS and ARGV tables (the next call makes new ones).
  void drop_kept_tables(cached_script& script) noexcept;

  replica& data_;
  pubsub* bus_ = nullptr;  // where PUBLISH delivers (none: it reaches nobody)
  const server_facts* facts_ = nullptr;  // what INFO server reports (none: an error)
  script_limits limits_;
  lua_State* lua_ = nullptr;
  lua_side* side_ = nullptr;
  std::vector<cached_script> scripts_;
  // Found by a view (EVALSHA's argument, lower-cased on the stack): no
  // string is made per call.
  struct sha_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view sha) const noexcept { return std::hash<std::string_view>{}(sha); }
  };
  // The cached script whose SHA is `sha` in any case; nullptr when none.
  [[nodiscard]] const std::size_t* find_sha(std::string_view sha) const noexcept;

  std::unordered_map<std::string, std::size_t, sha_hash, std::equal_to<>> by_sha_;  // lookups only, never iterated
  std::uint32_t generation_ = 1;
  std::string compile_error_;
  struct known_body {
    std::string body, sha;
  };
  std::array<known_body, 4> known_bodies_;  // replaced in turn: a pure function's memo, no effect on a reply
  std::size_t next_known_ = 0;

  script_error_info last_error_;
  std::uint64_t steps_ = 0;
  bool broken_number_conversion_ = false;
  bool native_twins_ = true;
  std::uint64_t native_twin_calls_ = 0;
  // math.random's state: Redis's lrand48 (48 bits), kept across script calls
  // and SCRIPT FLUSH like the server's. Starts where a fresh server starts.
  std::uint64_t rand48_state_ = 0x1234ABCD330EULL;

  friend struct lua_side;
  friend struct engine_access;
};

}  // namespace admit::redis
