// Helpers shared by the real-Redis agreement tests (redis_agreement_test,
// lua_agreement_test, protocol_agreement_test): reaching the test server,
// reading its whole keyspace in the replica's dump form, and reading its
// clock.
//
// The server is 127.0.0.1 at the port in ADMITSIM_REDIS_PORT (default 6390);
// the tests use, and FLUSH, its database 9. A test that cannot reach it
// FAILs (never skips) and says how to start one.
//
// Time: Redis's clock is the real one and cannot be set, so a test sends each
// operation in one pipeline, TIME, the operation, the dump script, TIME, and
// runs its own side at the milliseconds the two TIME readings bracket.
// parse_time_us reads a TIME reply; start_of_a_millisecond makes it likely
// that the whole pipeline falls inside one millisecond.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gate/redis/replica.hpp"
#include "tests/integration/redis_client.hpp"

namespace admit::redis::test {

inline int redis_port() {
  if (const char* env = std::getenv("ADMITSIM_REDIS_PORT")) return std::atoi(env);
  return 6390;
}

// The usual advice after a connection problem, for the test called
// `test_name` ("Lua agreement test"): where the server is expected and how to
// run the test with one.
inline std::string needs_a_server(std::string_view test_name) {
  return "The " + std::string(test_name) + " needs a redis-server on 127.0.0.1:" + std::to_string(redis_port()) +
         " (ADMITSIM_REDIS_PORT); run it with\n"
         "  tests/integration/run_with_redis.sh ctest --test-dir build -L redis";
}

// Connects to the test server and SELECTs database 9. If either fails, FAILs
// the current test with the problem and, on the next line, `how_to_start`.
inline std::unique_ptr<redis_client> connect_or_fail(const std::string& how_to_start) {
  std::unique_ptr<redis_client> client;
  std::string problem;
  try {
    client = std::make_unique<redis_client>("127.0.0.1", redis_port());
    const reply selected = client->call({"SELECT", "9"});
    if (selected != reply::status("OK")) problem = "SELECT 9 answered " + to_string(selected);
  } catch (const std::exception& e) {
    problem = e.what();
  }
  if (!problem.empty()) FAIL(problem << "\n" << how_to_start);
  return client;
}

// Dumps the keyspace of the selected database at one instant (a script runs
// atomically): per key its name, type, PEXPIRETIME and contents (a sorted
// set's members with scores in order, a hash's fields in HGETALL order, a
// string's value). Integers pass through Lua's doubles, so a deadline above
// 2^53 ms would not survive: the generators keep deadlines far below
// (PEXPIREAT 9223372036854775807 is a unit test in
// tests/redis/replica_test.cpp instead).
inline constexpr const char* dump_script = R"lua(
local out = {}
for _, key in ipairs(redis.call('KEYS', '*')) do
  local kind = redis.call('TYPE', key)['ok']
  local body = {}
  if kind == 'zset' then
    body = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  elseif kind == 'hash' then
    body = redis.call('HGETALL', key)
  elseif kind == 'string' then
    body = { redis.call('GET', key) }
  end
  out[#out + 1] = { key, kind, redis.call('PEXPIRETIME', key), body }
end
return out
)lua";

// The dump script's reply as the replica's dump_keys gives it: sorted by key.
inline std::vector<key_dump> parse_dump(const reply& r) {
  if (r.type != reply::kind::array) throw std::runtime_error("dump script answered " + to_string(r));
  std::vector<key_dump> keys;
  for (const reply& entry : r.elements) {
    key_dump d;
    d.key = entry.elements.at(0).text;
    const std::string& kind = entry.elements.at(1).text;
    const std::int64_t expire = entry.elements.at(2).integer;
    if (expire >= 0) d.expire_at_ms = expire;
    const auto& body = entry.elements.at(3).elements;
    if (kind == "zset") {
      d.type = value_type::zset;
      for (std::size_t i = 0; i + 1 < body.size(); i += 2) {
        d.members.push_back({std::strtod(body[i + 1].text.c_str(), nullptr), body[i].text});
      }
    } else if (kind == "hash") {
      d.type = value_type::hash;
      for (std::size_t i = 0; i + 1 < body.size(); i += 2) {
        d.fields.push_back({body[i].text, body[i + 1].text});
      }
    } else if (kind == "string") {
      d.type = value_type::string;
      d.value = body.at(0).text;
    } else {
      throw std::runtime_error("unexpected key type " + kind + " for " + d.key);
    }
    keys.push_back(std::move(d));
  }
  std::sort(keys.begin(), keys.end(), [](const key_dump& a, const key_dump& b) { return a.key < b.key; });
  return keys;
}

// A TIME reply as Unix microseconds.
inline std::int64_t parse_time_us(const reply& r) {
  if (r.type != reply::kind::array || r.elements.size() != 2) {
    throw std::runtime_error("TIME answered " + to_string(r));
  }
  return std::stoll(r.elements[0].text) * 1'000'000 + std::stoll(r.elements[1].text);
}

// Waits, on the host clock the server shares, until at most 600 us of the
// current millisecond have passed, so the pipeline usually runs inside one
// millisecond. Only an optimisation: correctness does not depend on it (the
// TIME bracket is what is correct).
inline void start_of_a_millisecond() {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  for (int spins = 0; spins < 1'000'000; ++spins) {
    const auto us = duration_cast<microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    if (us % 1000 < 600) return;
  }
}

}  // namespace admit::redis::test
