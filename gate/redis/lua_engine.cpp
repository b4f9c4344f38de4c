#include "gate/redis/lua_engine.hpp"

#include <clocale>
#include <locale.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "gate/admit_assert.hpp"
#include "gate/probe.hpp"
#include "gate/redis/redis_commands.hpp"
#include "gate/redis/sha1.hpp"
#include "gate/redis/write_effects.hpp"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
// The two headers below declare their luaopen_* without including lua.h.
#include <lua-bitop.h>
#include <lua-cjson.h>
}

// How the C functions below are written (Lua 5.1 raises errors with
// longjmp, which skips C++ destructors):
//  - A C function given to Lua keeps only trivially destructible locals
//    (pointers, numbers, views, lua_Debug). Its C++ work (strings, vectors,
//    replica calls) happens in a helper called first, which keeps its results
//    in `lua_side` (alive across calls) and returns a plain outcome; the
//    helper catches every C++ exception. Only then does the C function call
//    Lua API functions that may raise.
//  - The engine's own C++ code calls the Lua API outside any Lua frame only
//    through functions that do not raise: lua_pcall / lua_cpcall /
//    luaL_loadbuffer (protected), or allocating calls made while the
//    allocator's limit is lifted (`unlimited`), where only a real
//    out-of-memory could raise (and the panic handler then aborts).

namespace admit::redis {

namespace {

static_assert(LUA_NOREF == -2, "a kept_table's refs start as LUA_NOREF");

constexpr int steps_per_hook = 1000;
// A call whose KEYS and ARGV hold more bytes than this does not keep its
// tables for the next call (see script_engine::run).
constexpr std::size_t kept_argument_bytes_max = 4096;
constexpr int max_reply_depth = 1000;  // nesting of a script's returned tables
constexpr const char* chunk_name = "@user_script";
constexpr std::string_view compile_error_prefix = "ERR Error compiling script (new function): ";
constexpr std::string_view noscript_text = "NOSCRIPT No matching script. Please use EVAL.";
constexpr std::uint64_t rand48_mask = (std::uint64_t{1} << 48) - 1;
constexpr std::int32_t lrand48_max = 2147483647;  // INT32_MAX, Redis's modulus for math.random

// Raised by the step hook; passes through the error handler untouched.
int abort_sentinel = 0;

// The "C" locale for the duration of a call: Lua formats numbers with
// sprintf("%.14g") and reads them with strtod, both of which follow the
// thread's locale. A process that calls setlocale must not change replies.
locale_t c_locale() {
  static const locale_t c = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  return c;
}

class c_locale_scope {
 public:
  c_locale_scope() : previous_(uselocale(c_locale())) {}
  ~c_locale_scope() { uselocale(previous_); }
  c_locale_scope(const c_locale_scope&) = delete;
  c_locale_scope& operator=(const c_locale_scope&) = delete;

 private:
  locale_t previous_;
};

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Redis turns newlines in an error reply into spaces (one reply, one line).
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return text;
}

// Redis's strict integer syntax (string2ll): optional '-', no '+', no
// spaces, no leading zeros, within int64.
bool parse_strict_int64(std::string_view s, std::int64_t& out) {
  if (s.empty()) return false;
  if (s == "0") {
    out = 0;
    return true;
  }
  std::size_t at = 0;
  if (s[0] == '-') at = 1;
  if (at >= s.size() || s[at] < '1' || s[at] > '9') return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && ptr == s.data() + s.size();
}

// A number as redis.call passes it to a command: "%.17g", in every locale.
// An integer below 2^53 in magnitude prints its digits under "%.17g" (at
// most 16 of them, so no exponent), which the integer formatter gives far
// more cheaply; -0 is not one of them ("%.17g" prints "-0").
void format_number_argument(double v, std::string& out) {
  char buffer[64];
  constexpr double exact_max = 9007199254740992.0;  // 2^53
  if (v > -exact_max && v < exact_max && v != 0) {
    const auto i = static_cast<std::int64_t>(v);
    if (static_cast<double>(i) == v) {
      const auto result = std::to_chars(buffer, buffer + sizeof buffer, i);
      out.assign(buffer, result.ptr);
      return;
    }
  }
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::general, 17);
  out.assign(buffer, result.ptr);
}

// A Lua number as a script's integer reply: truncated toward zero. A value
// out of int64's range (or NaN) gives what the x86-64 conversion Redis
// compiles to gives, INT64_MIN, without its undefined behaviour here.
std::int64_t number_to_integer(double v, bool broken_round) {
  if (broken_round) v = std::round(v);
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
    return std::numeric_limits<std::int64_t>::min();
  }
  return static_cast<std::int64_t>(v);
}

// The table text of a command's error reply (`text` without its '-'), as
// Redis builds the {err=...} a script sees: the first word is the error code;
// a text of one word gets the generic code ERR. Trailing newlines go.
std::string_view trim_newlines(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

}  // namespace

// State shared between the engine and the C functions it gives Lua. Lives as
// long as the engine; the allocator's user data, so any C function (and the
// hook) reaches it through lua_getallocf.
struct script_engine::lua_side {
  script_engine* engine = nullptr;

  // Memory accounting and limit (the allocator).
  std::size_t heap_bytes = 0;
  std::size_t max_memory_bytes = 0;
  bool unlimited = false;           // the engine's own conversions: never refuse
  bool allocation_refused = false;  // the limit refused a request during this call

  // The running call.
  std::int64_t now_us = 0;
  bool read_only = false;
  std::uint64_t steps = 0;
  std::uint64_t max_steps = 0;
  bool aborting = false;  // max_steps reached: the hook raises at every chance

  // Registry references made at setup.
  int error_handler_ref = LUA_NOREF;
  int real_globals_ref = LUA_NOREF;
  int proxies_ref = LUA_NOREF;  // proxy table -> the real table behind it
  int set_keys_ref = LUA_NOREF;  // set_keys_and_argv as a Lua closure
  // The shared tables a script can write to and so keep a value in past its
  // call: the string metatable (getmetatable('')) and the metatable every
  // proxy answers (getmetatable(string)); and the string metatable's only
  // entry as set up, for shared_tables_as_set_up.
  int string_metatable_ref = LUA_NOREF;
  int locked_metatable_ref = LUA_NOREF;
  const void* string_index = nullptr;  // its value: the string library's proxy
  const char* index_name = nullptr;    // its key: Lua's "__index" string
  // False once a script left something in one of those tables: a kept KEYS
  // or ARGV table could then be reachable from a later call, so none is kept
  // from then on (until SCRIPT FLUSH makes a new state).
  bool keep_tables = true;

  // Scratch for redis.call: results of the C++ phase, read by the Lua phase.
  // `args` views the call's arguments: a string argument in place on the Lua
  // stack (it stays there until the C function returns), a number as its
  // text in `number_text`.
  std::vector<std::string_view> args;
  std::vector<std::string> number_text;
  // The last command names redis.call saw, exactly as given, with their
  // upper-case form and flags: a script calls a handful of names over and
  // over, and a hit costs one short comparison instead of a search of the
  // command table. Replaced in turn; a miss only costs the search.
  struct known_name {
    std::string given;
    std::string upper;
    commands::command_flags flags;
    replica::command_id command = nullptr;  // the replica's, found once; null: not modelled
  };
  std::array<known_name, 8> recent_names;
  std::size_t next_recent_name = 0;
  std::string name;  // the command, upper case
  reply command_reply;
  bool time_reply = false;  // the command is TIME: its reply is made from now_us, not in command_reply
  std::string error_text;          // the error a Lua phase must push or raise
  std::string failed_command;      // the last redis.call that raised an error ...
  std::string failed_command_error;  // ... and its error text

  // Where each write command a script applied is kept (set_effects); null: nowhere.
  write_effects* effects = nullptr;
};

namespace {

using lua_side = script_engine::lua_side;

replica& replica_of(lua_side& side);
pubsub* bus_of(lua_side& side);
const server_facts* facts_of(lua_side& side);
std::uint64_t& rand_state_of(lua_State* L);

lua_side& side_of(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return *static_cast<lua_side*>(ud);
}

void* bounded_alloc(void* ud, void* ptr, std::size_t old_size, std::size_t new_size) {
  auto& side = *static_cast<lua_side*>(ud);
  if (new_size == 0) {
    std::free(ptr);
    side.heap_bytes -= old_size;
    return nullptr;
  }
  // Lua requires that shrinking never fails; only growth is refused.
  if (new_size > old_size && !side.unlimited &&
      side.heap_bytes - old_size + new_size > side.max_memory_bytes) {
    side.allocation_refused = true;
    return nullptr;
  }
  void* grown = std::realloc(ptr, new_size);
  if (grown == nullptr) return nullptr;
  side.heap_bytes = side.heap_bytes - old_size + new_size;
  return grown;
}

int panic_handler(lua_State* L) {
  const char* message = lua_tostring(L, -1);
  std::fprintf(stderr, "admitsim: unprotected Lua error (a bug in the script engine): %s\n",
               message != nullptr ? message : "(not a string)");
  std::abort();
}

void step_hook(lua_State* L, lua_Debug* /*ar*/) {
  lua_side& side = side_of(L);
  if (!side.aborting) {
    side.steps += steps_per_hook;
    if (side.steps <= side.max_steps) return;
    side.aborting = true;
    ADMIT_PROBE(lua_step_limit);
    // From now on raise at every instruction, so that a pcall in the script
    // that catches the abort cannot keep it running.
    lua_sethook(L, step_hook, LUA_MASKCOUNT, 1);
  }
  lua_pushlightuserdata(L, &abort_sentinel);
  lua_error(L);
}

// --- pushing values and errors ---------------------------------------------

// Pushes the {err=...} table Redis makes from an error text (a command's
// error reply without its '-', or an error_reply argument).
void push_error_table(lua_State* L, std::string_view text) {
  text = trim_newlines(text);
  lua_createtable(L, 0, 1);
  if (text.find(' ') == std::string_view::npos) {
    lua_pushliteral(L, "ERR ");
    lua_pushlstring(L, text.data(), text.size());
    lua_concat(L, 2);
  } else {
    lua_pushlstring(L, text.data(), text.size());
  }
  lua_setfield(L, -2, "err");
}

[[noreturn]] void raise_error_table(lua_State* L, std::string_view text) {
  push_error_table(L, text);
  lua_error(L);
  std::abort();  // lua_error does not return
}

// A reply as the Lua value redis.call returns.
void push_reply(lua_State* L, const reply& r) {
  luaL_checkstack(L, 4, "reply nested too deeply");
  switch (r.type) {
    case reply::kind::nil:
      lua_pushboolean(L, 0);
      return;
    case reply::kind::integer:
      lua_pushnumber(L, static_cast<lua_Number>(r.integer));
      return;
    case reply::kind::bulk:
      lua_pushlstring(L, r.text.data(), r.text.size());
      return;
    case reply::kind::status:
      lua_createtable(L, 0, 1);
      lua_pushlstring(L, r.text.data(), r.text.size());
      lua_setfield(L, -2, "ok");
      return;
    case reply::kind::error:
      push_error_table(L, r.text);
      return;
    case reply::kind::array:
      lua_createtable(L, static_cast<int>(r.elements.size()), 0);
      for (std::size_t i = 0; i < r.elements.size(); ++i) {
        push_reply(L, r.elements[i]);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return;
  }
}

// --- redis.call / redis.pcall ------------------------------------------------

enum class command_outcome : std::uint8_t { ok, error };

// The C++ phase of redis.call: reads the arguments, runs the command and
// leaves the reply (or the error text) in `side`. Never throws.
command_outcome run_command(lua_State* L, lua_side& side, int argc) noexcept {
  try {
    const auto count = static_cast<std::size_t>(argc);
    // Sized before any view is taken: growing `number_text` later would move its strings.
    if (side.args.size() < count) side.args.resize(count);
    if (side.number_text.size() < count) side.number_text.resize(count);
    for (int i = 1; i <= argc; ++i) {
      const auto at = static_cast<std::size_t>(i - 1);
      const int type = lua_type(L, i);
      if (type == LUA_TSTRING) {
        std::size_t size = 0;
        const char* bytes = lua_tolstring(L, i, &size);  // a string: no conversion, no allocation
        side.args[at] = std::string_view(bytes, size);
      } else if (type == LUA_TNUMBER) {
        format_number_argument(lua_tonumber(L, i), side.number_text[at]);
        side.args[at] = side.number_text[at];
      } else {
        side.error_text = "ERR Lua redis lib command arguments must be strings or integers";
        return command_outcome::error;
      }
    }
    const lua_side::known_name* known = nullptr;
    for (const lua_side::known_name& k : side.recent_names) {
      if (k.given == side.args[0] && !k.upper.empty()) {
        known = &k;
        break;
      }
    }
    if (known == nullptr) {
      lua_side::known_name& k = side.recent_names[side.next_recent_name];
      side.next_recent_name = (side.next_recent_name + 1) % side.recent_names.size();
      k.given.assign(side.args[0]);
      k.upper.assign(side.args[0]);
      for (char& c : k.upper) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      }
      k.flags = commands::flags_of(k.upper);
      k.command = replica::find(k.upper);
      known = &k;
    }
    side.name.assign(known->upper);
    const commands::command_flags flags = known->flags;
    if (!flags.known) {
      side.error_text = "ERR Unknown Redis command called from script";
      return command_outcome::error;
    }
    if (flags.noscript) {
      side.error_text = "ERR This Redis command is not allowed from script";
      return command_outcome::error;
    }
    if (side.read_only && flags.write) {
      side.error_text = "ERR Write commands are not allowed from read-only scripts.";
      return command_outcome::error;
    }
    side.time_reply = count == 1 && side.name == "TIME";
    if (side.time_reply) return command_outcome::ok;  // redis_call_generic pushes it from now_us
    const std::span<const std::string_view> argv(side.args.data(), count);
    if (side.name == "INFO")  // the process's facts, not the keyspace's
      side.command_reply = info_reply(argv, facts_of(side), side.now_us);
    else
      side.command_reply = known->command != nullptr
                               ? replica_of(side).execute_found(known->command, argv, side.now_us, bus_of(side))
                               : replica_of(side).execute(argv, side.now_us, bus_of(side));
    if (!side.command_reply.is_error()) {
      if (flags.write && side.effects != nullptr) side.effects->add(argv);
      return command_outcome::ok;
    }
    const std::string& text = side.command_reply.text;
    if (text.starts_with("ERR unknown command '")) {
      // A real Redis command (checked above) that the replica does not model.
      side.error_text = "ERR admitsim: the replica does not model " + side.name + " (called from a script)";
    } else if (text.starts_with("ERR wrong number of arguments for '")) {
      side.error_text = "ERR Wrong number of args calling Redis command from script";
    } else {
      side.error_text = text;
    }
    return command_outcome::error;
  } catch (const std::exception& e) {
    side.error_text.assign("ERR admitsim: ");
    side.error_text.append(e.what());
    return command_outcome::error;
  } catch (...) {
    side.error_text.assign("ERR admitsim: unknown C++ exception in a script's command");
    return command_outcome::error;
  }
}

// Remembers which command raised (for last_error); never throws.
void note_failed_command(lua_side& side) noexcept {
  try {
    side.failed_command = side.name;
    side.failed_command_error = side.error_text;
  } catch (...) {
    side.failed_command.clear();
  }
}

// TIME's reply as the replica gives it ({seconds, microseconds} as bulk
// strings of the call's server time), pushed without making the reply.
void push_time_reply(lua_State* L, std::int64_t now_us) {
  ADMIT_ASSERT(now_us >= 0, "the server clock counts from the Unix epoch");
  char digits[24];
  lua_createtable(L, 2, 0);
  auto end = std::to_chars(digits, digits + sizeof digits, now_us / 1'000'000).ptr;
  lua_pushlstring(L, digits, static_cast<std::size_t>(end - digits));
  lua_rawseti(L, -2, 1);
  end = std::to_chars(digits, digits + sizeof digits, now_us % 1'000'000).ptr;
  lua_pushlstring(L, digits, static_cast<std::size_t>(end - digits));
  lua_rawseti(L, -2, 2);
}

int redis_call_generic(lua_State* L, bool raise) {
  lua_side& side = side_of(L);
  const int argc = lua_gettop(L);
  if (argc == 0) {
    constexpr std::string_view text = "ERR Please specify at least one argument for this redis lib call";
    if (raise) raise_error_table(L, text);
    push_error_table(L, text);
    return 1;
  }
  side.name.clear();
  const command_outcome outcome = run_command(L, side, argc);
  if (outcome == command_outcome::ok && side.time_reply) {
    push_time_reply(L, side.now_us);
    return 1;
  }
  if (outcome == command_outcome::ok) {
    push_reply(L, side.command_reply);
    return 1;
  }
  if (raise) {
    ADMIT_PROBE(lua_call_error_raised);
    note_failed_command(side);
    raise_error_table(L, side.error_text);
  }
  ADMIT_PROBE(lua_pcall_error_returned);
  push_error_table(L, side.error_text);
  return 1;
}

int redis_call(lua_State* L) { return redis_call_generic(L, true); }
int redis_pcall(lua_State* L) { return redis_call_generic(L, false); }

// --- the rest of the redis table ---------------------------------------------

int redis_status_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    push_error_table(L, "ERR wrong number or type of arguments");
    return 1;
  }
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "ok");
  return 1;
}

int redis_error_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    push_error_table(L, "ERR wrong number or type of arguments");
    return 1;
  }
  std::size_t size = 0;
  const char* bytes = lua_tolstring(L, 1, &size);
  std::string_view text(bytes, size);
  if (text.starts_with('-')) text.remove_prefix(1);
  push_error_table(L, text);
  return 1;
}

int redis_sha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) raise_error_table(L, "ERR wrong number of arguments");
  std::size_t size = 0;
  const char* bytes = lua_tolstring(L, 1, &size);  // a number converts, as in Redis; other types hash ""
  const auto digest = sha1(bytes != nullptr ? std::string_view(bytes, size) : std::string_view());
  static constexpr char digits[] = "0123456789abcdef";
  char hex[40];
  for (std::size_t i = 0; i < digest.size(); ++i) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 0xF];
  }
  lua_pushlstring(L, hex, sizeof hex);
  return 1;
}

// redis.log checks its arguments and logs nothing: the simulator has no log.
int redis_log(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) raise_error_table(L, "ERR redis.log() requires two arguments or more.");
  if (lua_type(L, 1) != LUA_TNUMBER) raise_error_table(L, "ERR First argument must be a number (log level).");
  const lua_Number level = lua_tonumber(L, 1);
  if (level < 0 || level > 3) raise_error_table(L, "ERR Invalid debug level.");
  return 0;
}

int redis_setresp(lua_State* L) {
  if (lua_gettop(L) != 1) raise_error_table(L, "ERR redis.setresp() requires one argument.");
  const auto resp = static_cast<long>(lua_tonumber(L, 1));
  if (resp != 2 && resp != 3) raise_error_table(L, "ERR RESP version must be 2 or 3.");
  if (resp == 3) {
    raise_error_table(L, "ERR admitsim: redis.setresp(3) is not supported (the engine speaks RESP2 only)");
  }
  return 0;
}

int redis_set_repl(lua_State* L) {
  if (lua_gettop(L) != 1) raise_error_table(L, "ERR redis.set_repl() requires two arguments.");
  const auto flags = static_cast<long>(lua_tonumber(L, 1));
  if ((flags & ~3L) != 0) {
    raise_error_table(L, "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
  }
  return 0;  // effects replication is all 7.0 has; nothing to choose here
}

int redis_replicate_commands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int redis_breakpoint(lua_State* L) {
  lua_pushboolean(L, 0);  // no debugger session
  return 1;
}

int redis_debug(lua_State* /*L*/) { return 0; }

// With no ACL users every known command is allowed.
int redis_acl_check_cmd(lua_State* L) {
  if (lua_gettop(L) == 0) raise_error_table(L, "ERR Please specify at least one argument for this redis lib call");
  std::size_t size = 0;
  const char* bytes = lua_type(L, 1) == LUA_TSTRING ? lua_tolstring(L, 1, &size) : nullptr;
  bool known = false;
  if (bytes != nullptr && size < 64) {
    char name[64];
    for (std::size_t i = 0; i < size; ++i) {
      const char c = bytes[i];
      name[i] = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    }
    known = commands::contains(commands::redis_commands, std::string_view(name, size));
  }
  if (!known) raise_error_table(L, "ERR Invalid command passed to redis.acl_check_cmd()");
  lua_pushboolean(L, 1);
  return 1;
}

// --- the error handler, pcall and the protected globals ----------------------

// The message handler of every script call: turns the error into the table
// Redis reports from, {err=..., source=..., line=...}. A string error becomes
// "ERR <text>". The position is the function that raised, or its caller when
// the raiser is a C function (redis.call, error).
int error_handler(lua_State* L) {
  lua_side& side = side_of(L);
  if (side.aborting || lua_type(L, 1) == LUA_TLIGHTUSERDATA) return 1;
  lua_settop(L, 1);
  lua_Debug ar;
  bool found = lua_getstack(L, 1, &ar) != 0 && lua_getinfo(L, "Sl", &ar) != 0;
  if (found && std::strcmp(ar.what, "C") == 0) {
    found = lua_getstack(L, 2, &ar) != 0 && lua_getinfo(L, "Sl", &ar) != 0;
  }
  if (!lua_istable(L, 1)) {
    lua_createtable(L, 0, 3);
    lua_pushliteral(L, "ERR ");
    lua_getfield(L, LUA_REGISTRYINDEX, "admitsim.tostring");
    lua_pushvalue(L, 1);
    ::lua_call(L, 1, 1);
    lua_concat(L, 2);
    lua_setfield(L, -2, "err");
    lua_replace(L, 1);
  }
  if (found) {
    lua_pushstring(L, ar.source);
    lua_setfield(L, 1, "source");
    lua_pushinteger(L, ar.currentline);
    lua_setfield(L, 1, "line");
  }
  return 1;
}

// Redis 7.0's pcall: an error table that carries `err` comes back as that
// value (the script sees the error text, not the table). The step limit's
// abort is never caught.
int pcall_wrapper(lua_State* L) {
  luaL_checkany(L, 1);
  const int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  lua_side& side = side_of(L);
  if (side.aborting) lua_error(L);
  if (status != 0) {
    if (lua_istable(L, -1)) {
      lua_pushliteral(L, "err");
      lua_rawget(L, -2);
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
      } else {
        lua_replace(L, -2);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  return lua_gettop(L);
}

// If the value at `index` is a protected proxy, replaces it with the table
// behind it.
void unwrap_proxy(lua_State* L, int index) {
  if (!lua_istable(L, index)) return;
  lua_side& side = side_of(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, side.proxies_ref);
  lua_pushvalue(L, index);
  lua_rawget(L, -2);
  if (lua_istable(L, -1)) {
    lua_replace(L, index);
    lua_pop(L, 1);
  } else {
    lua_pop(L, 2);
  }
}

bool is_proxy(lua_State* L, int index) {
  if (!lua_istable(L, index)) return false;
  lua_side& side = side_of(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, side.proxies_ref);
  lua_pushvalue(L, index);
  lua_rawget(L, -2);
  const bool found = lua_istable(L, -1);
  lua_pop(L, 2);
  return found;
}

[[noreturn]] void raise_readonly(lua_State* L, bool with_position) {
  if (with_position) luaL_error(L, "Attempt to modify a readonly table");
  lua_pushliteral(L, "Attempt to modify a readonly table");
  lua_error(L);
  std::abort();
}

int readonly_newindex(lua_State* L) { raise_readonly(L, true); }

int missing_global(lua_State* L) {
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", lua_tostring(L, 2));
}

int rawget_wrapper(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  lua_settop(L, 2);
  unwrap_proxy(L, 1);
  lua_rawget(L, 1);
  return 1;
}

int rawset_wrapper(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  lua_settop(L, 3);
  if (is_proxy(L, 1)) raise_readonly(L, false);
  lua_rawset(L, 1);
  return 1;
}

int next_wrapper(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  unwrap_proxy(L, 1);
  if (lua_next(L, 1) != 0) return 2;
  lua_pushnil(L);
  return 1;
}

int pairs_wrapper(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(1));  // next_wrapper
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

int setmetatable_wrapper(lua_State* L) {
  if (is_proxy(L, 1)) raise_readonly(L, false);
  lua_pushvalue(L, lua_upvalueindex(1));  // the base library's setmetatable
  lua_insert(L, 1);
  ::lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// --- math.random: Redis's lrand48 ------------------------------------------

std::int32_t next_rand48(std::uint64_t& state) {
  state = (state * 0x5DEECE66DULL + 0xB) & rand48_mask;
  return static_cast<std::int32_t>(state >> 17);
}

int math_random(lua_State* L) {
  // As Lua 5.1's math.random, over Redis's generator: draw first, then check.
  const lua_Number r = static_cast<lua_Number>(next_rand48(rand_state_of(L)) % lrand48_max) /
                       static_cast<lua_Number>(lrand48_max);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      const int upper_bound = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= upper_bound, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * upper_bound) + 1);
      break;
    }
    case 2: {
      const int lower_bound = luaL_checkint(L, 1);
      const int upper_bound = luaL_checkint(L, 2);
      luaL_argcheck(L, lower_bound <= upper_bound, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (upper_bound - lower_bound + 1)) + lower_bound);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

// Lua 5.1's tonumber (luaB_tonumber), with one shortcut: a string of at
// most 15 decimal digits, with an optional '-' and surrounding white space,
// is that integer exactly (below 10^15 < 2^53, so strtod's rounding is exact
// too), which skips strtod, called twice by the stock function (lua_isnumber,
// then lua_tonumber). Everything else goes the stock way, with the stock
// checks and error texts.
bool plain_decimal(const char* s, std::size_t size, lua_Number& out) {
  std::size_t i = 0;
  const auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (i < size && space(s[i])) ++i;
  bool negative = false;
  if (i < size && s[i] == '-') {
    negative = true;
    ++i;
  }
  const std::size_t first = i;
  std::int64_t v = 0;
  while (i < size && s[i] >= '0' && s[i] <= '9' && i - first < 15) v = v * 10 + (s[i++] - '0');
  if (i == first) return false;
  while (i < size && space(s[i])) ++i;
  if (i != size) return false;  // more digits, a '.', an exponent, "0x", an embedded NUL, ...
  out = negative ? -static_cast<lua_Number>(v) : static_cast<lua_Number>(v);
  return true;
}

int tonumber(lua_State* L) {
  const int base = luaL_optint(L, 2, 10);
  if (base == 10) {
    luaL_checkany(L, 1);
    if (lua_type(L, 1) == LUA_TSTRING) {
      std::size_t size = 0;
      const char* s = lua_tolstring(L, 1, &size);
      lua_Number n = 0;
      if (plain_decimal(s, size, n)) {
        lua_pushnumber(L, n);
        return 1;
      }
    }
    if (lua_isnumber(L, 1)) {
      lua_pushnumber(L, lua_tonumber(L, 1));
      return 1;
    }
  } else {
    const char* s1 = luaL_checkstring(L, 1);
    char* s2 = nullptr;
    luaL_argcheck(L, 2 <= base && base <= 36, 2, "base out of range");
    const unsigned long n = std::strtoul(s1, &s2, base);
    if (s1 != s2) {
      while (std::isspace(static_cast<unsigned char>(*s2))) ++s2;
      if (*s2 == '\0') {
        lua_pushnumber(L, static_cast<lua_Number>(n));
        return 1;
      }
    }
  }
  lua_pushnil(L);
  return 1;
}

int math_randomseed(lua_State* L) {
  const auto seed = static_cast<std::uint32_t>(luaL_checkint(L, 1));
  rand_state_of(L) = ((std::uint64_t{seed} << 16) | 0x330E) & rand48_mask;
  return 0;
}

// --- setup ------------------------------------------------------------------

void open_library(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  ::lua_call(L, 1, 1);
  if (!lua_isnil(L, -1) && name[0] != '\0') {
    lua_getglobal(L, name);
    const bool already = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!already) {
      lua_pushvalue(L, -1);
      lua_setglobal(L, name);
    }
  }
  lua_pop(L, 1);
}

int absolute(lua_State* L, int index) { return index < 0 ? lua_gettop(L) + index + 1 : index; }

void set_function(lua_State* L, int table, const char* name, lua_CFunction f) {
  table = absolute(L, table);
  lua_pushcfunction(L, f);
  lua_setfield(L, table, name);
}

void set_number(lua_State* L, int table, const char* name, lua_Number v) {
  table = absolute(L, table);
  lua_pushnumber(L, v);
  lua_setfield(L, table, name);
}

// Pushes a proxy for the table at `real`: reads go through to it, writes
// raise "Attempt to modify a readonly table". Records the pair in the proxy
// registry. `locked_metatable` is what getmetatable(proxy) answers. All
// three are absolute stack indices.
void push_proxy(lua_State* L, int real, int proxies, int locked_metatable) {
  lua_newtable(L);             // the proxy
  lua_createtable(L, 0, 3);    // its metatable
  lua_pushvalue(L, real);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, readonly_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushvalue(L, locked_metatable);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_pushvalue(L, real);
  lua_rawset(L, proxies);  // proxies[proxy] = real
}

int set_keys_and_argv(lua_State* L);

int setup_state(lua_State* L) {
  lua_side& side = *static_cast<lua_side*>(lua_touserdata(L, 1));
  lua_settop(L, 0);

  open_library(L, luaopen_base, "");
  open_library(L, luaopen_table, LUA_TABLIBNAME);
  open_library(L, luaopen_string, LUA_STRLIBNAME);
  open_library(L, luaopen_math, LUA_MATHLIBNAME);
  open_library(L, luaopen_cjson, "cjson");
  open_library(L, luaopen_bit, "bit");

  // What Redis 7.0 removes from the base library.
  for (const char* name : {"print", "dofile", "loadfile", "setfenv", "getfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }

  lua_pushvalue(L, LUA_GLOBALSINDEX);
  const int real_globals = lua_gettop(L);  // 1

  lua_getglobal(L, "tostring");
  lua_setfield(L, LUA_REGISTRYINDEX, "admitsim.tostring");

  lua_getglobal(L, "math");
  set_function(L, -1, "random", math_random);
  set_function(L, -1, "randomseed", math_randomseed);
  lua_pop(L, 1);

  set_function(L, real_globals, "tonumber", tonumber);
  set_function(L, real_globals, "pcall", pcall_wrapper);
  set_function(L, real_globals, "rawget", rawget_wrapper);
  set_function(L, real_globals, "rawset", rawset_wrapper);
  set_function(L, real_globals, "next", next_wrapper);
  lua_pushcfunction(L, next_wrapper);
  lua_pushcclosure(L, pairs_wrapper, 1);
  lua_setfield(L, real_globals, "pairs");
  lua_getglobal(L, "setmetatable");
  lua_pushcclosure(L, setmetatable_wrapper, 1);
  lua_setfield(L, real_globals, "setmetatable");

  // The redis table.
  lua_newtable(L);
  const int redis_table = lua_gettop(L);
  set_function(L, redis_table, "call", redis_call);
  set_function(L, redis_table, "pcall", redis_pcall);
  set_function(L, redis_table, "status_reply", redis_status_reply);
  set_function(L, redis_table, "error_reply", redis_error_reply);
  set_function(L, redis_table, "sha1hex", redis_sha1hex);
  set_function(L, redis_table, "log", redis_log);
  set_function(L, redis_table, "setresp", redis_setresp);
  set_function(L, redis_table, "set_repl", redis_set_repl);
  set_function(L, redis_table, "replicate_commands", redis_replicate_commands);
  set_function(L, redis_table, "breakpoint", redis_breakpoint);
  set_function(L, redis_table, "debug", redis_debug);
  set_function(L, redis_table, "acl_check_cmd", redis_acl_check_cmd);
  set_number(L, redis_table, "LOG_DEBUG", 0);
  set_number(L, redis_table, "LOG_VERBOSE", 1);
  set_number(L, redis_table, "LOG_NOTICE", 2);
  set_number(L, redis_table, "LOG_WARNING", 3);
  set_number(L, redis_table, "REPL_NONE", 0);
  set_number(L, redis_table, "REPL_AOF", 1);
  set_number(L, redis_table, "REPL_SLAVE", 2);
  set_number(L, redis_table, "REPL_REPLICA", 2);
  set_number(L, redis_table, "REPL_ALL", 3);
  lua_pushliteral(L, "7.0.15");
  lua_setfield(L, redis_table, "REDIS_VERSION");
  set_number(L, redis_table, "REDIS_VERSION_NUM", 0x07000f);
  lua_setfield(L, real_globals, "redis");

  lua_pushcfunction(L, error_handler);
  side.error_handler_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  // Its upvalues: the real globals and the two names (no lookup, no hashing per call).
  lua_pushvalue(L, real_globals);
  lua_pushliteral(L, "KEYS");
  lua_pushliteral(L, "ARGV");
  lua_pushcclosure(L, set_keys_and_argv, 3);
  side.set_keys_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushcfunction(L, error_handler);
  lua_setfield(L, real_globals, "__redis__err__handler");

  // Read-only libraries and globals. Stock Lua 5.1 has no read-only tables
  // (Redis patches its Lua for them), so each protected table is replaced by
  // an empty proxy whose reads fall through to the real table and whose
  // writes raise; rawget/rawset/next/pairs/setmetatable see through proxies.
  lua_newtable(L);
  const int proxies = lua_gettop(L);
  lua_newtable(L);
  const int locked_metatable = lua_gettop(L);  // what getmetatable answers for a proxy
  for (const char* name : {"string", "table", "math", "coroutine", "cjson", "bit", "redis"}) {
    lua_getfield(L, real_globals, name);
    const int real = lua_gettop(L);
    push_proxy(L, real, proxies, locked_metatable);
    lua_setfield(L, real_globals, name);
    lua_pop(L, 1);
  }
  // ("x"):upper() goes through the string metatable: point it at the proxy.
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_getfield(L, real_globals, "string");
  side.string_index = lua_topointer(L, -1);
  lua_setfield(L, -2, "__index");
  lua_pushliteral(L, "__index");
  side.index_name = lua_tostring(L, -1);
  lua_pop(L, 1);
  lua_pushvalue(L, -1);
  side.string_metatable_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pop(L, 2);
  lua_pushvalue(L, locked_metatable);
  side.locked_metatable_ref = luaL_ref(L, LUA_REGISTRYINDEX);

  // The globals: a read of a missing one raises, and so does any write.
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, missing_global);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, real_globals);
  push_proxy(L, real_globals, proxies, locked_metatable);
  const int globals_proxy = lua_gettop(L);
  lua_pushvalue(L, globals_proxy);
  lua_setfield(L, real_globals, "_G");

  lua_pushvalue(L, proxies);
  side.proxies_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, real_globals);
  side.real_globals_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  // Functions compiled from now on (scripts, loadstring, coroutines) see
  // the proxy as their globals.
  lua_pushvalue(L, globals_proxy);
  lua_replace(L, LUA_GLOBALSINDEX);
  lua_settop(L, 0);
  return 0;
}

void push_string_array(lua_State* L, std::span<const std::string> items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (std::size_t i = 0; i < items.size(); ++i) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

using kept_table = script_engine::kept_table;

struct call_setup {
  lua_side* side;
  std::span<const std::string> keys;
  std::span<const std::string> args;
  kept_table* kept;  // the script's KEYS and ARGV; entries sized for this call
};

// True when the kept table at `table` is exactly as set: no metatable,
// entries 1..count the strings set (interned: the same string object, kept
// alive by the anchor, so the same address) and no other key. A script that
// changed anything (a value, an entry added or removed, a hash key, a
// metatable) fails it.
bool untouched(lua_State* L, int table, const kept_table& kept) {
  if (lua_getmetatable(L, table) != 0) {
    lua_pop(L, 1);
    return false;
  }
  for (std::size_t i = 0; i < kept.count; ++i) {
    lua_rawgeti(L, table, static_cast<int>(i + 1));
    const bool same = lua_type(L, -1) == LUA_TSTRING && lua_tolstring(L, -1, nullptr) == kept.entries[i].data();
    lua_pop(L, 1);
    if (!same) return false;
  }
  std::size_t seen = 0;
  lua_pushnil(L);
  while (lua_next(L, table) != 0) {
    lua_pop(L, 1);
    if (++seen > kept.count) {
      lua_pop(L, 1);
      return false;
    }
  }
  return seen == kept.count;
}

// Leaves on the stack the script's kept table, given the strings `items`: a
// string equal to the one already there stays (no interning), others are
// pushed; a table the script touched is replaced by a new one, as Redis
// makes new tables for every call.
void fill_kept(lua_State* L, kept_table& kept, std::span<const std::string> items) {
  bool fresh = kept.ref == LUA_NOREF;
  if (!fresh) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, kept.ref);
    if (!untouched(L, lua_gettop(L), kept)) {
      lua_pop(L, 1);
      fresh = true;
    }
  }
  if (fresh) {
    lua_createtable(L, static_cast<int>(items.size()), 0);
    lua_pushvalue(L, -1);
    if (kept.ref == LUA_NOREF) {
      kept.ref = luaL_ref(L, LUA_REGISTRYINDEX);
    } else {
      lua_rawseti(L, LUA_REGISTRYINDEX, kept.ref);
    }
  }
  const int table = lua_gettop(L);
  int anchor = 0;  // pushed when first needed
  const auto push_anchor = [&] {
    if (anchor != 0) return;
    if (kept.anchor_ref == LUA_NOREF) {
      lua_createtable(L, static_cast<int>(items.size()), 0);
      lua_pushvalue(L, -1);
      kept.anchor_ref = luaL_ref(L, LUA_REGISTRYINDEX);
      kept.count = 0;
    } else {
      lua_rawgeti(L, LUA_REGISTRYINDEX, kept.anchor_ref);
    }
    anchor = lua_gettop(L);
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    const int at = static_cast<int>(i + 1);
    if (i < kept.count && kept.entries[i] == items[i]) {
      if (fresh) {
        push_anchor();
        lua_rawgeti(L, anchor, at);
        lua_rawseti(L, table, at);
      }
      continue;
    }
    push_anchor();
    lua_pushlstring(L, items[i].data(), items[i].size());
    kept.entries[i] = std::string_view(lua_tolstring(L, -1, nullptr), items[i].size());
    lua_pushvalue(L, -1);
    lua_rawseti(L, anchor, at);
    lua_rawseti(L, table, at);
  }
  for (std::size_t i = items.size(); i < kept.count; ++i) {
    const int at = static_cast<int>(i + 1);
    push_anchor();
    lua_pushnil(L);
    lua_rawseti(L, anchor, at);
    if (!fresh) {
      lua_pushnil(L);
      lua_rawseti(L, table, at);
    }
  }
  kept.count = items.size();
  lua_settop(L, table);
}

// Sets KEYS and ARGV (run under lua_pcall: a memory error is a status, and
// the caller then drops the script's kept tables, which it may have left
// half set). Redis makes two new tables for every call; here a script's
// tables are kept and refilled, which a script cannot tell apart: a table it
// modified is replaced (`untouched`), and it can keep a reference past its
// call only in a shared table it can write, which script_engine::run checks
// after every call (`shared_tables_as_set_up`).
int set_keys_and_argv(lua_State* L) {
  const auto& setup = *static_cast<const call_setup*>(lua_touserdata(L, 1));
  const int globals = lua_upvalueindex(1);
  lua_pushvalue(L, lua_upvalueindex(2));  // "KEYS"
  if (setup.side->keep_tables) {
    fill_kept(L, setup.kept[0], setup.keys);
  } else {
    push_string_array(L, setup.keys);
  }
  lua_rawset(L, globals);
  lua_pushvalue(L, lua_upvalueindex(3));  // "ARGV"
  if (setup.side->keep_tables) {
    fill_kept(L, setup.kept[1], setup.args);
  } else {
    push_string_array(L, setup.args);
  }
  lua_rawset(L, globals);
  return 0;
}

// True when the tables a script could keep a value in past its call hold
// only what the setup put there. Raw accesses only; allocates nothing.
bool shared_tables_as_set_up(lua_State* L, const lua_side& side) {
  const int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, side.locked_metatable_ref);
  bool as_set_up = lua_getmetatable(L, -1) == 0;
  if (as_set_up) {
    lua_pushnil(L);
    as_set_up = lua_next(L, -2) == 0;
  }
  lua_settop(L, top);
  if (!as_set_up) return false;
  // The string metatable: one entry, __index (a fixed string of Lua's: it
  // is never collected, so its address stays), the string library's proxy.
  lua_rawgeti(L, LUA_REGISTRYINDEX, side.string_metatable_ref);
  const int metatable = lua_gettop(L);
  as_set_up = lua_getmetatable(L, metatable) == 0;
  if (as_set_up) {
    lua_pushnil(L);
    as_set_up = lua_next(L, metatable) != 0 && lua_type(L, -2) == LUA_TSTRING &&
                lua_tolstring(L, -2, nullptr) == side.index_name && lua_topointer(L, -1) == side.string_index;
  }
  if (as_set_up) {
    lua_pop(L, 1);
    as_set_up = lua_next(L, metatable) == 0;
  }
  lua_settop(L, top);
  return as_set_up;
}

}  // namespace

// Reaches the engine's private parts from the C functions above.
struct engine_access {
  static replica& data(script_engine& e) { return e.data_; }
  static pubsub* bus(script_engine& e) { return e.bus_; }
  static const server_facts* facts(script_engine& e) { return e.facts_; }
  static std::uint64_t& rand_state(script_engine& e) { return e.rand48_state_; }
};

namespace {
replica& replica_of(lua_side& side) { return engine_access::data(*side.engine); }
pubsub* bus_of(lua_side& side) { return engine_access::bus(*side.engine); }
const server_facts* facts_of(lua_side& side) { return engine_access::facts(*side.engine); }
std::uint64_t& rand_state_of(lua_State* L) { return engine_access::rand_state(*side_of(L).engine); }
}  // namespace

// --- script_engine -------------------------------------------------------------

script_engine::script_engine(replica& data, script_limits limits) : data_(data), limits_(limits) {
  ADMIT_ASSERT(limits_.max_steps > 0, "a script needs at least one step");
  ADMIT_ASSERT(limits_.max_memory_bytes >= (1u << 20), "the Lua state needs at least 1 MiB to start");
  side_ = new lua_side();
  side_->engine = this;
  side_->max_memory_bytes = limits_.max_memory_bytes;
  side_->max_steps = limits_.max_steps;
  try {
    open_state();
  } catch (...) {
    delete side_;
    throw;
  }
}

script_engine::~script_engine() {
  close_state();
  delete side_;
}

std::size_t script_engine::lua_heap_bytes() const noexcept { return side_->heap_bytes; }

void script_engine::open_state() {
  const c_locale_scope locale;
  side_->keep_tables = true;
  lua_ = lua_newstate(bounded_alloc, side_);
  if (lua_ == nullptr) throw std::runtime_error("admitsim: cannot create a Lua state (memory limit too small?)");
  lua_atpanic(lua_, panic_handler);
  if (lua_cpcall(lua_, setup_state, side_) != 0) {
    const char* message = lua_tostring(lua_, -1);
    std::string text = message != nullptr ? message : "unknown error";
    close_state();
    throw std::runtime_error("admitsim: cannot set up the Lua state: " + text);
  }
  ADMIT_ASSERT(lua_gettop(lua_) == 0 && !side_->unlimited, "a state set up leaves its stack empty, under its limit");
}

void script_engine::close_state() noexcept {
  if (lua_ != nullptr) lua_close(lua_);
  lua_ = nullptr;
}

void script_engine::script_flush() {
  close_state();
  scripts_.clear();
  by_sha_.clear();
  ++generation_;
  if (generation_ == 0) generation_ = 1;  // 0 marks an invalid handle
  open_state();
  ADMIT_ASSERT(scripts_.empty() && by_sha_.empty() && generation_ != 0 && lua_ != nullptr,
               "a flush leaves no script cached, a fresh state and a new generation");
}

const std::size_t* script_engine::find_sha(std::string_view sha) const noexcept {
  if (sha.size() != 40) return nullptr;
  char lowered[40];
  for (std::size_t i = 0; i < sha.size(); ++i) {
    const char c = sha[i];
    lowered[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  const auto it = by_sha_.find(std::string_view(lowered, sizeof lowered));
  return it == by_sha_.end() ? nullptr : &it->second;
}

bool script_engine::script_exists(std::string_view sha) const { return find_sha(sha) != nullptr; }

bool script_engine::find_or_compile(std::string_view body, std::string_view sha, std::size_t& index) {
  ADMIT_ASSERT(lua_ != nullptr && lua_gettop(lua_) == 0 && !side_->unlimited,
               "between calls the Lua state is open, its stack empty and its heap limit on");
  ADMIT_ASSERT(by_sha_.size() == scripts_.size(), "one cached script per SHA");
  if (const auto it = by_sha_.find(sha); it != by_sha_.end()) {
    index = it->second;
    ADMIT_ASSERT(index < scripts_.size() && scripts_[index].sha == sha, "the SHA index names its own script");
    return true;
  }
  const c_locale_scope locale;
  side_->allocation_refused = false;
  const int status = luaL_loadbuffer(lua_, body.data(), body.size(), chunk_name);
  if (status != 0) {
    side_->unlimited = true;
    std::size_t size = 0;
    const char* message = lua_tolstring(lua_, -1, &size);
    compile_error_ = one_line(std::string(compile_error_prefix) +
                              (message != nullptr ? std::string(message, size) : std::string("?")));
    lua_settop(lua_, 0);
    side_->unlimited = false;
    ADMIT_ASSERT(!compile_error_.empty(), "a script that does not compile has an error to show");
    return false;
  }
  side_->unlimited = true;  // luaL_ref may grow the registry; it must not raise here
  const int ref = luaL_ref(lua_, LUA_REGISTRYINDEX);
  side_->unlimited = false;
  ADMIT_ASSERT(ref != LUA_NOREF && ref != LUA_REFNIL, "a compiled chunk is a function, kept in the registry");
  scripts_.push_back(cached_script{std::string(sha), ref, {}, native_twin_of(sha)});
  index = scripts_.size() - 1;
  by_sha_.emplace(std::string(sha), index);
  ADMIT_ASSERT(lua_gettop(lua_) == 0 && by_sha_.size() == scripts_.size() && scripts_[index].sha == sha,
               "the new script is cached under its SHA and the stack is empty again");
  return true;
}

void script_engine::drop_kept_tables(cached_script& script) noexcept {
  const bool was_unlimited = side_->unlimited;
  side_->unlimited = true;  // luaL_unref only writes an existing registry slot
  for (kept_table& kept : script.kept) {
    if (kept.ref != LUA_NOREF) luaL_unref(lua_, LUA_REGISTRYINDEX, kept.ref);
    if (kept.anchor_ref != LUA_NOREF) luaL_unref(lua_, LUA_REGISTRYINDEX, kept.anchor_ref);
    kept.ref = LUA_NOREF;
    kept.anchor_ref = LUA_NOREF;
    kept.count = 0;
  }
  side_->unlimited = was_unlimited;
}

reply script_engine::noscript(std::string sha) {
  ADMIT_PROBE(lua_noscript);
  return fail(std::move(sha), std::string(noscript_text));
}

reply script_engine::fail(std::string sha, std::string message) {
  last_error_ = script_error_info{};
  last_error_.sha = std::move(sha);
  last_error_.message = message;
  return reply::error(std::move(message));
}

const std::string& script_engine::sha_of(std::string_view body) {
  for (const known_body& k : known_bodies_)
    if (!k.sha.empty() && k.body == body) return k.sha;
  known_body& slot = known_bodies_[next_known_];
  next_known_ = (next_known_ + 1) % known_bodies_.size();
  slot.body.assign(body);
  slot.sha = sha1_hex(body);
  ADMIT_ASSERT(slot.sha.size() == 40, "a SHA1 in hex is 40 digits");
  return slot.sha;
}

reply script_engine::script_load(std::string_view body) {
  const std::string sha = sha_of(body);
  std::size_t index = 0;
  if (!find_or_compile(body, sha, index)) return fail(sha, compile_error_);
  ADMIT_ASSERT(sha.size() == 40 && index < scripts_.size() && scripts_[index].sha == sha, "a loaded script is cached by its SHA");
  return reply::bulk(sha);
}

script_handle script_engine::load_handle(std::string_view body) {
  const std::string sha = sha_of(body);
  std::size_t index = 0;
  if (!find_or_compile(body, sha, index)) {
    fail(sha, compile_error_);
    return script_handle{};
  }
  ADMIT_ASSERT(index < scripts_.size() && generation_ != 0, "a handle names a cached script of this generation");
  return script_handle{static_cast<std::uint32_t>(index), generation_};
}

reply script_engine::call(script_handle handle, std::span<const std::string> keys,
                          std::span<const std::string> args, std::int64_t server_now_us) {
  if (!handle.valid()) return reply::error(last_error_.message.empty() ? std::string(noscript_text) : last_error_.message);
  if (handle.generation != generation_) return noscript("");
  ADMIT_ASSERT(handle.index < scripts_.size(), "a handle of this generation names a cached script");
  return run(handle.index, keys, args, server_now_us, false);
}

reply script_engine::eval(std::string_view body, std::span<const std::string> keys,
                          std::span<const std::string> args, std::int64_t server_now_us) {
  const std::string sha = sha_of(body);
  std::size_t index = 0;
  if (!find_or_compile(body, sha, index)) return fail(sha, compile_error_);
  return run(index, keys, args, server_now_us, false);
}

reply script_engine::evalsha(std::string_view sha, std::span<const std::string> keys,
                             std::span<const std::string> args, std::int64_t server_now_us) {
  const std::size_t* index = find_sha(sha);
  if (index == nullptr) return noscript(std::string(sha));
  ADMIT_ASSERT(*index < scripts_.size(), "a SHA found names a cached script");
  return run(*index, keys, args, server_now_us, false);
}

namespace {

// A script's return value as a reply (Redis 7.0's Lua-to-RESP2 rules). Runs
// outside any Lua frame with the allocator's limit lifted; uses only raw
// accesses (no metamethods, so no Lua code runs).
reply value_to_reply(lua_State* L, int index, int depth, bool broken_round, bool& too_deep) {
  switch (lua_type(L, index)) {
    case LUA_TNUMBER:
      return reply::from_integer(number_to_integer(lua_tonumber(L, index), broken_round));
    case LUA_TSTRING: {
      std::size_t size = 0;
      const char* bytes = lua_tolstring(L, index, &size);
      return reply::bulk(std::string(bytes, size));
    }
    case LUA_TBOOLEAN:
      return lua_toboolean(L, index) != 0 ? reply::from_integer(1) : reply::nil();
    case LUA_TTABLE:
      break;
    default:
      return reply::nil();  // nil, functions, userdata, threads
  }
  if (depth >= max_reply_depth) {
    too_deep = true;
    return reply::nil();
  }
  lua_checkstack(L, 3);
  lua_pushliteral(L, "err");
  lua_rawget(L, index);
  if (lua_type(L, -1) == LUA_TSTRING) {
    std::size_t size = 0;
    const char* bytes = lua_tolstring(L, -1, &size);
    reply out = reply::error(one_line(std::string(bytes, size)));
    lua_pop(L, 1);
    return out;
  }
  lua_pop(L, 1);
  lua_pushliteral(L, "ok");
  lua_rawget(L, index);
  if (lua_type(L, -1) == LUA_TSTRING) {
    std::size_t size = 0;
    const char* bytes = lua_tolstring(L, -1, &size);
    reply out = reply::status(one_line(std::string(bytes, size)));
    lua_pop(L, 1);
    return out;
  }
  lua_pop(L, 1);
  std::vector<reply> elements;
  for (int i = 1;; ++i) {
    lua_rawgeti(L, index, i);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    elements.push_back(value_to_reply(L, lua_gettop(L), depth + 1, broken_round, too_deep));
    lua_pop(L, 1);
    if (too_deep) break;
  }
  return reply::array(std::move(elements));
}

// A field of the error table as text (a string, or a number as Lua prints
// it); false when the field is neither.
bool field_as_text(lua_State* L, int table, const char* field, std::string& out) {
  lua_pushstring(L, field);
  lua_rawget(L, table);
  const int type = lua_type(L, -1);
  const bool present = type == LUA_TSTRING || type == LUA_TNUMBER;
  if (present) {
    std::size_t size = 0;
    const char* bytes = lua_tolstring(L, -1, &size);
    out.assign(bytes, size);
  }
  lua_pop(L, 1);
  return present;
}

}  // namespace

reply script_engine::run(std::size_t index, std::span<const std::string> keys,
                         std::span<const std::string> args, std::int64_t server_now_us, bool read_only) {
  ADMIT_ASSERT(index < scripts_.size(), "run() is given a cached script");
  ADMIT_ASSERT(lua_ != nullptr && lua_gettop(lua_) == 0 && !side_->unlimited,
               "between calls the Lua state is open, its stack empty and its heap limit on");
  cached_script& script = scripts_[index];
  // One of the project's own lease scripts, in the domain its C++ twin is held to (native_twins.hpp):
  // the same reply and writes without the VM, its writes kept for a follower by the replica's typed
  // methods. Not where the Lua's refusals matter: EVAL_RO, limits set lower.
  if (script.twin && native_twins_ && !read_only && limits_.max_steps >= script_limits{}.max_steps &&
      limits_.max_memory_bytes >= script_limits{}.max_memory_bytes) {
    struct typed_effects_scope {
      replica& data;
      ~typed_effects_scope() { data.set_typed_effects(nullptr); }
    } scope{data_};
    data_.set_typed_effects(side_->effects);
    if (std::optional<reply> out = run_native_twin(data_, *script.twin, keys, args, server_now_us)) {
      steps_ = 0;
      ++native_twin_calls_;
      return std::move(*out);
    }
  }
  const c_locale_scope locale;
  lua_side& side = *side_;
  side.now_us = server_now_us;
  side.read_only = read_only;
  side.steps = 0;
  side.aborting = false;
  side.allocation_refused = false;
  side.failed_command.clear();
  const std::string& sha = scripts_[index].sha;

  // Sized here, outside any Lua frame (growing may throw); set_keys_and_argv only assigns.
  if (script.kept[0].entries.size() < keys.size()) script.kept[0].entries.resize(keys.size());
  if (script.kept[1].entries.size() < args.size()) script.kept[1].entries.resize(args.size());
  call_setup setup{side_, keys, args, script.kept};
  // As lua_cpcall(set_keys_and_argv), without the C closure lua_cpcall makes
  // (and the collector later frees) on every call: the function is made once.
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, side.set_keys_ref);
  lua_pushlightuserdata(lua_, &setup);
  if (lua_pcall(lua_, 1, 0, 0) != 0) {
    lua_settop(lua_, 0);
    drop_kept_tables(script);
    lua_gc(lua_, LUA_GCCOLLECT, 0);
    reply out = fail(sha, "ERR admitsim: KEYS and ARGV exceed the Lua heap limit of " +
                              std::to_string(limits_.max_memory_bytes) + " bytes");
    last_error_.memory_limit = true;
    return out;
  }
  ADMIT_ASSERT(lua_gettop(lua_) == 0, "KEYS and ARGV are set without leaving anything on the stack");

  lua_rawgeti(lua_, LUA_REGISTRYINDEX, side.error_handler_ref);
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, script.function_ref);
  ADMIT_ASSERT(lua_isfunction(lua_, 1) && lua_isfunction(lua_, 2), "the error handler and the script are functions");
  lua_sethook(lua_, step_hook, LUA_MASKCOUNT, steps_per_hook);
  const int status = lua_pcall(lua_, 0, 1, 1);
  lua_sethook(lua_, nullptr, 0, 0);
  steps_ = side.steps;
  // The error handler stays at 1; the script's one result, or its error, takes the function's place.
  ADMIT_ASSERT(lua_gettop(lua_) == 2, "a protected call leaves the handler and one value");

  side.unlimited = true;
  // Large arguments are not kept past the call (the globals still hold
  // them until the next call, as before): a script's kept tables must not
  // hold the heap that a later call of another script needs.
  std::size_t argument_bytes = 0;
  for (const std::string& k : keys) argument_bytes += k.size();
  for (const std::string& a : args) argument_bytes += a.size();
  if (argument_bytes > kept_argument_bytes_max) drop_kept_tables(script);
  if (side.keep_tables && !shared_tables_as_set_up(lua_, side)) {
    side.keep_tables = false;
    for (cached_script& s : scripts_) drop_kept_tables(s);
  }
  if (!side.keep_tables) drop_kept_tables(script);
  struct restore_limit {
    lua_side& side;
    lua_State* L;
    ~restore_limit() {
      lua_settop(L, 0);
      side.unlimited = false;
    }
  } restore{side, lua_};

  if (status == 0) {
    bool too_deep = false;
    reply out = value_to_reply(lua_, lua_gettop(lua_), 0, broken_number_conversion_, too_deep);
    if (too_deep) {
      return fail(sha, "ERR admitsim: the script's reply nests tables deeper than " +
                           std::to_string(max_reply_depth) + " levels");
    }
    return out;
  }

  if (side.aborting) {
    reply out = fail(sha, "ERR admitsim: script exceeded " + std::to_string(limits_.max_steps) +
                              " Lua steps (a real Redis would be BUSY)");
    last_error_.step_limit = true;
    return out;
  }
  if (status == LUA_ERRMEM || (side.allocation_refused && !lua_istable(lua_, -1))) {
    lua_settop(lua_, 0);
    lua_gc(lua_, LUA_GCCOLLECT, 0);
    reply out = fail(sha, "ERR admitsim: script exceeded the Lua heap limit of " +
                              std::to_string(limits_.max_memory_bytes) +
                              " bytes (a real Redis would run out of memory)");
    last_error_.memory_limit = true;
    return out;
  }

  const int error_at = lua_gettop(lua_);
  std::string message;
  int line = 0;
  if (lua_istable(lua_, error_at)) {
    std::string err;
    std::string source;
    std::string line_text;
    if (field_as_text(lua_, error_at, "err", err)) {
      message = err;
    } else {
      // Redis 7.0.15 crashes on error({}); say what happened instead.
      message = "ERR admitsim: the script raised a table without an 'err' text";
    }
    field_as_text(lua_, error_at, "source", source);
    field_as_text(lua_, error_at, "line", line_text);
    if (!line_text.empty() && !source.empty()) {
      message += " script: " + sha + ", on " + source + ":" + line_text + ".";
    }
    line = std::atoi(line_text.c_str());
    if (!side.failed_command.empty() && err == side.failed_command_error) {
      message = one_line(std::move(message));
      reply out = fail(sha, message);
      last_error_.line = line;
      last_error_.command = side.failed_command;
      return out;
    }
  } else {
    std::size_t size = 0;
    const char* bytes = lua_tolstring(lua_, error_at, &size);
    message = "ERR Error running script f_" + sha + ", " +
              (bytes != nullptr ? std::string(bytes, size) : std::string("execution failure"));
  }
  reply out = fail(sha, one_line(std::move(message)));
  last_error_.line = line;
  last_error_.memory_limit = side.allocation_refused;
  return out;
}

reply script_engine::eval_command(std::span<const std::string> argv, std::int64_t server_now_us,
                                  bool by_sha, bool read_only) {
  if (argv.size() < 3) {
    return reply::error("ERR wrong number of arguments for '" + lower(argv[0]) + "' command");
  }
  std::int64_t numkeys = 0;
  if (!parse_strict_int64(argv[2], numkeys)) return reply::error("ERR value is not an integer or out of range");
  const auto available = static_cast<std::int64_t>(argv.size() - 3);
  if (numkeys > available) return reply::error("ERR Number of keys can't be greater than number of args");
  if (numkeys < 0) return reply::error("ERR Number of keys can't be negative");
  const auto keys = argv.subspan(3, static_cast<std::size_t>(numkeys));
  const auto args = argv.subspan(3 + static_cast<std::size_t>(numkeys));
  std::size_t index = 0;
  if (by_sha) {
    const std::string& sha = argv[1];
    const std::size_t* found = find_sha(sha);
    if (found == nullptr) return noscript(sha);
    index = *found;
  } else {
    const std::string& sha = sha_of(argv[1]);
    if (!find_or_compile(argv[1], sha, index)) return fail(sha, compile_error_);
  }
  return run(index, keys, args, server_now_us, read_only);
}

reply script_engine::script_command(std::span<const std::string> argv) {
  if (argv.size() < 2) return reply::error("ERR wrong number of arguments for 'script' command");
  const std::string sub = lower(argv[1]);
  if (sub == "load") {
    if (argv.size() != 3) return reply::error("ERR wrong number of arguments for 'script|load' command");
    return script_load(argv[2]);
  }
  if (sub == "exists") {
    if (argv.size() < 3) return reply::error("ERR wrong number of arguments for 'script|exists' command");
    std::vector<reply> out;
    out.reserve(argv.size() - 2);
    for (std::size_t i = 2; i < argv.size(); ++i) out.push_back(reply::from_integer(script_exists(argv[i]) ? 1 : 0));
    return reply::array(std::move(out));
  }
  if (sub == "flush") {
    if (argv.size() == 3) {
      const std::string mode = lower(argv[2]);
      if (mode != "sync" && mode != "async") return reply::error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    } else if (argv.size() > 3) {
      return reply::error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    script_flush();
    return reply::status("OK");
  }
  return reply::error("ERR unknown subcommand '" + argv[1] + "'. Try SCRIPT HELP.");
}

reply script_engine::execute(std::span<const std::string> argv, std::int64_t server_now_us) {
  if (argv.empty()) return data_.execute(argv, server_now_us, bus_);
  const std::string name = upper(argv[0]);
  if (name == "EVAL") return eval_command(argv, server_now_us, false, false);
  if (name == "EVALSHA") return eval_command(argv, server_now_us, true, false);
  if (name == "EVAL_RO") return eval_command(argv, server_now_us, false, true);
  if (name == "EVALSHA_RO") return eval_command(argv, server_now_us, true, true);
  if (name == "SCRIPT") return script_command(argv);
  if (name == "INFO") {
    std::vector<std::string_view> views(argv.begin(), argv.end());
    return info_reply(views, facts_, server_now_us);
  }
  reply answer = data_.execute(argv, server_now_us, bus_);
  if (side_->effects != nullptr && !answer.is_error() && commands::flags_of(name).write) {
    const std::vector<std::string_view> views(argv.begin(), argv.end());
    side_->effects->add(views);
  }
  return answer;
}

void script_engine::set_effects(write_effects* sink) noexcept { side_->effects = sink; }

}  // namespace admit::redis
