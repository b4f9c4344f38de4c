// The shipped Lua scripts (gate/redis/lua/*.lua) run through the script
// engine agree with their C++ bodies (run_acquire / run_release / run_renew).
// Method: RapidCheck generates operation sequences per variant (several
// workers, skewed caller clocks, repeated and stale tokens, lease and limit
// down to 0, a clock that may step back); each operation runs on two replicas,
// once as the C++ body and once as EVAL of the embedded Lua file with the
// KEYS/ARGV of lua_*_call, and the replies and whole keyspaces must match.
#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <string>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/lua_engine.hpp"
#include "tests/redis/redis_test_support.hpp"

namespace admit::redis::test {
namespace {

// The engine's reply against the C++ body's: equal, except that a script
// error carries Redis's " script: ..." suffix after the command's text.
bool same_reply(const reply& cpp, const reply& lua) {
  if (cpp.is_error() && lua.is_error()) return lua.text.starts_with(cpp.text);
  return cpp == lua;
}

struct step_result {
  reply cpp;
  reply lua;
};

// `mutant`: the acquire script with an off-by-one in its limit check
// (">= limit" becomes "> limit"), the guard that the property can fail.
std::string acquire_source(variant v, bool mutant) {
  std::string body(lua_source(v, script_op::acquire));
  if (mutant) {
    const auto at = body.find(">= limit");
    ADMIT_ASSERT(at != std::string::npos, "the acquire script checks the limit with >=");
    body.replace(at, 8, "> limit");
  }
  return body;
}

void run_differential(variant v, bool mutant) {
  const std::string acquire_body = acquire_source(v, mutant);
  replica cpp_data;
  replica lua_data;
  script_engine engine(lua_data);
  engine.set_native_twins(false);  // the Lua itself, never its twin (which is the C++ body)
  const int operations = uniform_in(1, 60);
  std::int64_t server_ms = 0;
  const std::string gate = pick<std::string>({"gate", "{g}:inflight"});
  for (int i = 0; i < operations; ++i) {
    server_ms += uniform_in<std::int64_t>(-3, 40);  // may step back: a fault the world injects
    const std::int64_t now_us = at_ms(server_ms) + uniform_in<std::int64_t>(0, 1000);
    const std::string token = "t" + std::to_string(uniform_in(0, 6));
    const int op = uniform_in(0, has_renew(v) ? 3 : 2);
    reply cpp;
    reply lua;
    if (op == 0 || op == 1) {
      acquire_args a;
      a.key = gate;
      a.token = token;
      a.now_ms = t0_ms + server_ms + uniform_in<std::int64_t>(-50, 50);  // the caller's skewed clock
      a.lease_ms = uniform_in<std::int64_t>(0, 120);
      a.limit = uniform_in<std::int64_t>(0, 4);
      a.queue_timeout_ms = uniform_in<std::int64_t>(0, 80);
      cpp = to_reply(run_acquire(cpp_data, v, a, now_us));
      const lua_call call = lua_acquire_call(v, a);
      lua = engine.eval(acquire_body, call.keys, call.argv, now_us);
    } else if (op == 2) {
      release_args a{gate, token};
      cpp = to_reply(run_release(cpp_data, v, a, now_us));
      const lua_call call = lua_release_call(v, a);
      lua = engine.eval(lua_source(v, script_op::release), call.keys, call.argv, now_us);
    } else {
      renew_args a{gate, token, uniform_in<std::int64_t>(0, 120)};
      cpp = to_reply(run_renew(cpp_data, v, a, now_us));
      const lua_call call = lua_renew_call(v, a);
      lua = engine.eval(lua_source(v, script_op::renew), call.keys, call.argv, now_us);
    }
    RC_ASSERT(same_reply(cpp, lua));
    RC_ASSERT(cpp_data.dump_keys(now_us) == lua_data.dump_keys(now_us));
  }
}

}  // namespace

TEST_CASE("lua differential: shipped scripts through the engine agree with the C++ bodies", "[lua]") {
  for (const variant v : all_variants) {
    const auto result = check_property("lua differential: " + std::string(to_string(v)),
                                       [v] { run_differential(v, false); }, 300);
    INFO(to_string(v) << "\n" << describe(result, "build/tests/redis/lua_engine_tests"));
    CHECK(passed(result));
  }
}

TEST_CASE("lua differential: an off-by-one in a Lua script is noticed", "[lua]") {
  for (const variant v : {variant::seed, variant::server_time, variant::fencing}) {
    const auto result = check_property("lua differential mutant: " + std::string(to_string(v)),
                                       [v] { run_differential(v, true); }, 300);
    INFO(to_string(v));
    CHECK(failed(result));
  }
}

TEST_CASE("lua differential: a wrong number conversion is noticed", "[lua]") {
  // Goal: the differential can fail; method: the engine rounds numbers
  // instead of truncating, and a script returning a fraction shows it.
  replica data;
  script_engine engine(data);
  const std::vector<std::string> none;
  CHECK(engine.eval("return 2.7", none, none, t0_us) == integer(2));
  engine.set_broken_number_conversion_for_tests(true);
  CHECK(engine.eval("return 2.7", none, none, t0_us) == integer(3));
}

}  // namespace admit::redis::test
