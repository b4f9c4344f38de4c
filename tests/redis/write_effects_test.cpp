// Effects replication: a follower that applies the write commands a
// primary's scripts made holds what the primary holds, even where a script
// read the clock, a random number or a key that expired; reads and failed
// writes are not kept.
#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <string>
#include <vector>

#include "gate/redis/lua_engine.hpp"
#include "gate/redis/write_effects.hpp"
#include "tests/redis/redis_test_support.hpp"

namespace admit::redis::test {
namespace {

std::vector<std::string> words(const write_effects& e, std::size_t i) {
  const std::vector<std::string_view> v = e.command(i);
  return {v.begin(), v.end()};
}

// One script a property call runs: each line one redis.pcall, some of whose
// arguments the script makes from what it read (TIME, math.random, a
// count), so a follower rerunning it at another time or with another
// generator would write something else.
const std::vector<std::string> script_lines = {
    "redis.pcall('ZADD', KEYS[1], redis.call('TIME')[2], ARGV[1])",
    "redis.pcall('ZADD', KEYS[1], math.random(1000), ARGV[1])",
    "redis.pcall('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])",
    "redis.pcall('PEXPIRE', KEYS[1], ARGV[2])",
    "redis.pcall('SET', KEYS[2], redis.call('TIME')[1] .. ':' .. ARGV[1])",
    "redis.pcall('SET', KEYS[2], 'v', 'PX', ARGV[2])",
    "redis.pcall('INCR', KEYS[2])",
    "redis.pcall('HSET', KEYS[3], ARGV[1], redis.pcall('ZCARD', KEYS[1]))",
    "redis.pcall('DEL', KEYS[math.random(3)])",
    "redis.pcall('ZADD', KEYS[2], 1, 'x')",  // WRONGTYPE when KEYS[2] is a string: not kept
    "redis.pcall('ZCARD', KEYS[1])",         // a read: not kept
};

// Runs generated scripts on a primary and applies their effects to a
// follower; `lose_last`: the follower drops each call's last write (the
// guard that the comparison can fail).
void run_replication(bool lose_last) {
  replica primary_data;
  replica follower_data;
  script_engine primary(primary_data);
  const int calls = uniform_in(1, 30);
  std::int64_t now_us = t0_us;
  const std::vector<std::string> keys = {"z", "s", "h"};
  for (int c = 0; c < calls; ++c) {
    now_us += uniform_in<std::int64_t>(0, 50'000);
    std::string body;
    const int lines = uniform_in(1, 6);
    for (int l = 0; l < lines; ++l) body += script_lines[uniform_in<std::size_t>(0, script_lines.size())] + "\n";
    const std::vector<std::string> args = {"m" + std::to_string(uniform_in(0, 4)),
                                           std::to_string(uniform_in<std::int64_t>(1, 80))};
    write_effects effects;
    primary.set_effects(&effects);
    (void)primary.eval(body, keys, args, now_us);
    primary.set_effects(nullptr);
    if (lose_last && !effects.empty()) {
      write_effects kept;
      for (std::size_t i = 0; i + 1 < effects.commands(); ++i) kept.add(effects.command(i));
      effects = kept;
    }
    effects.apply_to(follower_data, now_us);
    RC_ASSERT(primary_data.dump_keys(now_us) == follower_data.dump_keys(now_us));
  }
}

}  // namespace

TEST_CASE("write effects: a script's writes are kept in order, its reads and failed writes are not", "[lua]") {
  // Goal: what set_effects keeps, by example; method: one script with a read, two writes and a WRONGTYPE
  // write under pcall, then a plain command through execute().
  replica data;
  script_engine engine(data);
  write_effects effects;
  engine.set_effects(&effects);
  const std::vector<std::string> keys = {"z", "s"};
  const std::vector<std::string> args = {"m"};
  const reply r = engine.eval(
      "redis.call('ZCARD', KEYS[1]) redis.call('ZADD', KEYS[1], 5, ARGV[1]) redis.call('SET', KEYS[2], 'v') "
      "redis.pcall('ZADD', KEYS[2], 1, 'x') return redis.call('TIME')[1]",
      keys, args, t0_us);
  CHECK_FALSE(r.is_error());
  const std::vector<std::string> get = {"GET", "s"};
  const std::vector<std::string> del = {"DEL", "s"};
  (void)engine.execute(get, t0_us);
  (void)engine.execute(del, t0_us);
  engine.set_effects(nullptr);
  const auto kept_state = data.dump_keys(t0_us);
  (void)engine.execute(std::vector<std::string>{"DEL", "z"}, t0_us);  // no sink: not kept
  REQUIRE(effects.commands() == 3);
  CHECK(words(effects, 0) == std::vector<std::string>{"ZADD", "z", "5", "m"});
  CHECK(words(effects, 1) == std::vector<std::string>{"SET", "s", "v"});
  CHECK(words(effects, 2) == std::vector<std::string>{"DEL", "s"});
  replica follower;
  effects.apply_to(follower, t0_us);
  CHECK(follower.dump_keys(t0_us) == kept_state);
  CHECK(follower.dump_keys(t0_us) != data.dump_keys(t0_us));  // the DEL made without a sink is not there
}

TEST_CASE("write effects: a follower applying a primary's effects holds what the primary holds", "[lua]") {
  const auto result = check_property("write effects: follower equals primary", [] { run_replication(false); }, 300);
  INFO(describe(result, "build/tests/redis/lua_engine_tests"));
  CHECK(passed(result));
}

TEST_CASE("write effects: a follower that loses a write is noticed", "[lua]") {
  const auto result = check_property("write effects: lossy follower", [] { run_replication(true); }, 300);
  CHECK(failed(result));
}

}  // namespace admit::redis::test
