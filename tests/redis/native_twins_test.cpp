// The engine's native twins (gate/redis/native_twins.hpp): a call of a shipped
// lease script answers and writes the same whether its C++ twin or the Lua VM
// runs it. Method: RapidCheck histories per shipped file, each call run on two
// engines over two replicas, one with twins on and one with every script in
// Lua; the replies and whole keyspaces must match after every call, and a
// follower applying the twins' engine's write effects must hold what its
// primary holds. Besides
// well-formed calls the histories hold what must send a call back to the Lua:
// keys of another type, counters that are not integers or near 2^53, numbers
// written another way ("007", "1e3", "-5"), keys not derived from the gate,
// a missing or extra argument, and EVAL_RO.
#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <string>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/lua_engine.hpp"
#include "gate/redis/native_twins.hpp"
#include "gate/redis/write_effects.hpp"
#include "gate/redis/sha1.hpp"
#include "tests/redis/redis_test_support.hpp"

namespace admit::redis::test {
namespace {

struct twin_case {
  variant v;
  script_op op;
};
const std::vector<twin_case> shipped = {{variant::seed, script_op::acquire},    {variant::server_time, script_op::acquire},
                                        {variant::fencing, script_op::acquire}, {variant::fair, script_op::acquire},
                                        {variant::seed, script_op::release},    {variant::fair, script_op::release},
                                        {variant::renewal, script_op::renew}};

std::string a_number() {
  switch (uniform_in(0, 6)) {
    case 0: return std::to_string(uniform_in<std::int64_t>(0, 5));
    case 1: return std::to_string(uniform_in<std::int64_t>(0, 200));
    case 2: return std::to_string(max_exact_number - uniform_in<std::int64_t>(0, 2));
    case 3: return pick<std::string>({"007", "1e3", "-5", " 5", "5.0", "", "x", "9007199254740993"});
    case 4: return std::to_string(t0_ms + uniform_in<std::int64_t>(-50, 50));
    default: return std::to_string(uniform_in<std::int64_t>(0, 120));
  }
}

// A call's KEYS and ARGV: mostly as a client sends them, sometimes bent.
lua_call a_call(const twin_case& c, const std::string& gate) {
  const std::string token = "t" + std::to_string(uniform_in(0, 5));
  lua_call call;
  if (c.op == script_op::acquire) {
    acquire_args a;
    a.key = gate;
    a.token = token;
    a.now_ms = t0_ms + uniform_in<std::int64_t>(-50, 50);
    a.lease_ms = uniform_in<std::int64_t>(0, 120);
    a.limit = uniform_in<std::int64_t>(0, 4);
    a.queue_timeout_ms = uniform_in<std::int64_t>(0, 80);
    call = lua_acquire_call(c.v, a);
  } else if (c.op == script_op::release) {
    call = lua_release_call(c.v, release_args{gate, token});
  } else {
    call = lua_renew_call(c.v, renew_args{gate, token, uniform_in<std::int64_t>(0, 120)});
  }
  switch (uniform_in(0, 10)) {
    case 0: {  // a number written another way, or out of range
      auto& argv = call.argv;
      argv[uniform_in<std::size_t>(0, argv.size())] = a_number();
      break;
    }
    case 1:  // a key not derived from the gate
      call.keys[uniform_in<std::size_t>(0, call.keys.size())] += ":other";
      break;
    case 2:  // an argument too many or too few
      if (uniform_in(0, 2) == 0)
        call.argv.push_back("extra");
      else
        call.argv.pop_back();
      break;
    default:
      break;
  }
  return call;
}

// Something a client or another script may have left in one of the gate's keys.
std::vector<std::string> a_disturbance(const std::string& gate) {
  const lease_keys k = keys_for(gate);
  const std::string key = pick<std::string>({k.gate, k.fence, k.queue, k.seen, k.ticket});
  switch (uniform_in(0, 5)) {
    case 0: return {"SET", key, pick<std::string>({"x", "12", "007", "-3", "9007199254740991", "9223372036854775807"})};
    case 1: return {"HSET", key, "f", "v"};
    case 2: return {"ZADD", key, std::to_string(t0_ms + uniform_in<std::int64_t>(-200, 200)), "t" + std::to_string(uniform_in(0, 5))};
    case 3: return {"DEL", key};
    default: return {"PEXPIRE", key, std::to_string(uniform_in<std::int64_t>(1, 60))};
  }
}

// Calls of the histories so far, and those engine A's twin answered: both paths must be taken.
std::uint64_t calls_made = 0;
std::uint64_t calls_by_twin = 0;

// `body_b`: what engine B runs for the shipped file (its own text: the guard passes a mutant).
void run_twin_history(const twin_case& c, const std::string& body_b) {
  const std::string body_a(lua_source(c.v, c.op));
  replica data_a;
  replica data_b;
  replica follower_a;  // applies engine A's effects
  script_engine a(data_a);
  script_engine b(data_b);
  b.set_native_twins(false);
  const std::string gate = pick<std::string>({"gate", "{g}:inflight"});
  const int steps = uniform_in(1, 50);
  std::int64_t now_us = t0_us;
  for (int i = 0; i < steps; ++i) {
    now_us += uniform_in<std::int64_t>(0, 40'000);
    write_effects effects;
    a.set_effects(&effects);
    if (uniform_in(0, 6) == 0) {
      const std::vector<std::string> argv = a_disturbance(gate);
      RC_ASSERT(a.execute(argv, now_us) == b.execute(argv, now_us));
      a.set_effects(nullptr);
      effects.apply_to(follower_a, now_us);
      RC_ASSERT(follower_a.dump_keys(now_us) == data_a.dump_keys(now_us));
      continue;
    }
    const lua_call call = a_call(c, gate);
    const bool read_only = uniform_in(0, 12) == 0;
    std::vector<std::string> argv_a = {read_only ? "EVAL_RO" : "EVAL", body_a, std::to_string(call.keys.size())};
    argv_a.insert(argv_a.end(), call.keys.begin(), call.keys.end());
    argv_a.insert(argv_a.end(), call.argv.begin(), call.argv.end());
    std::vector<std::string> argv_b = argv_a;
    argv_b[1] = body_b;
    const reply ra = a.execute(argv_a, now_us);
    reply rb = b.execute(argv_b, now_us);
    if (body_b != body_a && rb.is_error()) {
      // The mutant's SHA is not the shipped file's: the error suffix names another script.
      const auto at = rb.text.find(sha1_hex(body_b));
      if (at != std::string::npos) rb.text.replace(at, 40, sha1_hex(body_a));
    }
    a.set_effects(nullptr);
    RC_ASSERT(ra == rb);
    RC_ASSERT(data_a.dump_keys(now_us) == data_b.dump_keys(now_us));
    effects.apply_to(follower_a, now_us);
    RC_ASSERT(follower_a.dump_keys(now_us) == data_a.dump_keys(now_us));
    ++calls_made;
  }
  calls_by_twin += a.native_twin_calls();
  RC_ASSERT(b.native_twin_calls() == 0u);
}

// The acquire scripts with an off-by-one in the limit check, the guard's B side.
std::string mutant_of(const twin_case& c) {
  std::string body(lua_source(c.v, c.op));
  const auto at = body.find(">= limit");
  ADMIT_ASSERT(at != std::string::npos, "the acquire scripts check the limit with >=");
  body.replace(at, 8, "> limit");
  return body;
}

}  // namespace

TEST_CASE("native twins: every shipped script answers and writes as its Lua does", "[lua]") {
  for (const twin_case& c : shipped) {
    const std::string name = std::string(lua_file(c.v, c.op));
    calls_made = 0;
    calls_by_twin = 0;
    const auto result = check_property("native twins: " + name, [c] { run_twin_history(c, std::string(lua_source(c.v, c.op))); }, 300);
    INFO(name << "\n" << describe(result, "build/tests/redis/lua_engine_tests"));
    CHECK(passed(result));
    // Both paths taken, in every file's histories: the twin for a third of the calls or more, the Lua for the bent ones.
    CHECK(calls_by_twin * 3 > calls_made);
    CHECK(calls_by_twin < calls_made);
  }
}

TEST_CASE("native twins: a Lua that differs from its twin is noticed", "[lua]") {
  for (const twin_case& c : {shipped[0], shipped[1], shipped[2]}) {
    const auto result = check_property("native twins mutant: " + std::string(lua_file(c.v, c.op)),
                                       [c] { run_twin_history(c, mutant_of(c)); }, 300);
    CHECK(failed(result));
  }
}

TEST_CASE("native twins: the twin answers well-formed calls and leaves the rest to the Lua", "[lua]") {
  // Goal: the domain is reached and bounded, by example. Method: one engine, the shipped server_time
  // acquire and release; count the calls the twin answered.
  replica data;
  script_engine e(data);
  const std::string acquire(lua_source(variant::server_time, script_op::acquire));
  const std::string release(lua_source(variant::seed, script_op::release));
  CHECK(native_twin_of(sha1_hex(acquire)).has_value());
  CHECK_FALSE(native_twin_of(sha1_hex(acquire + " ")).has_value());
  const std::vector<std::string> gate = {"gate"};
  using args = std::vector<std::string>;
  CHECK(e.eval(acquire, gate, args{"1000", "2", "w1"}, t0_us) == integer(1));
  CHECK(e.native_twin_calls() == 1);
  CHECK(e.eval(acquire, gate, args{"1000", "02", "w2"}, t0_us) == integer(1));  // "02": the Lua's
  CHECK(e.native_twin_calls() == 1);
  CHECK(e.eval(release, gate, args{"w1"}, t0_us) == integer(1));
  CHECK(e.native_twin_calls() == 2);
  (void)e.execute(std::vector<std::string>{"SET", "gate", "x"}, t0_us);
  const reply wrong = e.eval(release, gate, args{"w2"}, t0_us);  // WRONGTYPE: the Lua's, with its line
  CHECK(wrong.is_error());
  CHECK(wrong.text.find("@user_script:") != std::string::npos);
  CHECK(e.native_twin_calls() == 2);
  write_effects effects;
  e.set_effects(&effects);
  (void)e.execute(std::vector<std::string>{"DEL", "gate"}, t0_us);
  CHECK(e.eval(acquire, gate, args{"1000", "2", "w3"}, t0_us) == integer(1));  // with a sink too
  CHECK(e.eval(acquire, gate, args{"1000", "2", "w4"}, t0_us) == integer(1));
  CHECK(e.native_twin_calls() == 4);
  // DEL; the first acquire's ZADD and PEXPIRE (its reaping of a missing set changed nothing and is
  // not kept); the second's ZREMRANGEBYSCORE, ZADD and PEXPIRE.
  REQUIRE(effects.commands() == 6);
  const auto words = [&](std::size_t i) {
    const std::vector<std::string_view> v = effects.command(i);
    return std::vector<std::string>(v.begin(), v.end());
  };
  const std::string now_ms = std::to_string(t0_us / 1000);
  CHECK(words(1) == std::vector<std::string>{"ZADD", "gate", now_ms, "w3"});
  CHECK(words(2) == std::vector<std::string>{"PEXPIRE", "gate", "1000"});
  CHECK(words(3) == std::vector<std::string>{"ZREMRANGEBYSCORE", "gate", "0", std::to_string(t0_us / 1000 - 1000)});
  CHECK(words(4) == std::vector<std::string>{"ZADD", "gate", now_ms, "w4"});
  replica follower;
  effects.apply_to(follower, t0_us);
  CHECK(follower.dump_keys(t0_us) == data.dump_keys(t0_us));
}

}  // namespace admit::redis::test
