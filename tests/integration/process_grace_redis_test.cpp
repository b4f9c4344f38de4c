// The process_grace design (scenarios/designs/process_grace/) against a real
// redis-server and through the simulator's Lua engine, step by step: INFO
// server works inside a script on the real server, the acquire records the
// serving process's run id and refuses for one lease, grants after it, and
// starts a new grace when the record names another process. The engine,
// told of a process whose run id is the server's, gives the same replies at
// the same server times.
//
// The server is 127.0.0.1:$ADMITSIM_REDIS_PORT (default 6390), database 9,
// which the test flushes. Run:
//   tests/integration/run_with_redis.sh ctest --test-dir build -L redis
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "gate/redis/lua_engine.hpp"
#include "gate/redis/server_info.hpp"
#include "tests/integration/agreement_support.hpp"

using namespace admit;
using admit::redis::reply;

namespace {

const char* const how_to_start = "run it with: tests/integration/run_with_redis.sh ctest --test-dir build -L redis";
constexpr std::int64_t lease_ms = 400;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string run_id_of(redis::test::redis_client& c) {
  const reply r = c.call({"INFO", "server"});
  REQUIRE(r.type == reply::kind::bulk);
  const auto at = r.text.find("run_id:");
  REQUIRE(at != std::string::npos);
  return r.text.substr(at + 7, 40);
}

// One acquire on both sides: the real server's EVAL between two TIME readings, the engine's at the first.
struct both_sides {
  redis::test::redis_client& real;
  redis::script_engine& engine;
  std::string body;
  std::vector<reply> real_replies{};
  std::vector<reply> engine_replies{};

  void acquire(const std::string& token) {
    const auto replies = real.pipeline({{"TIME"},
                                        {"EVAL", body, "2", "g", "g:process", std::to_string(lease_ms), "2", token},
                                        {"TIME"}});
    REQUIRE(replies.size() == 3);
    const std::int64_t before = redis::test::parse_time_us(replies[0]);
    const std::int64_t after = redis::test::parse_time_us(replies[2]);
    // A grace boundary 50 ms away from every step below: the engine's instant may be off by the pipeline's time.
    REQUIRE(after - before < 20'000);
    real_replies.push_back(replies[1]);
    const std::vector<std::string> keys{"g", "g:process"};
    const std::vector<std::string> args{std::to_string(lease_ms), "2", token};
    engine_replies.push_back(engine.eval(body, keys, args, before));
  }
};

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

TEST_CASE("process_grace on a redis-server and in the engine: a grace per serving process", "[grace][redis]") {
  auto server = redis::test::connect_or_fail(how_to_start);
  REQUIRE(server->call({"FLUSHDB"}) == reply::status("OK"));
  const std::string run_id = run_id_of(*server);

  redis::replica data;
  redis::script_engine engine(data);
  const redis::server_facts facts{run_id, 0};
  engine.set_server_facts(&facts);
  both_sides s{*server, engine, slurp(std::string(ADMITSIM_SOURCE_DIR) + "/scenarios/designs/process_grace/acquire.lua")};

  s.acquire("t1");  // no record: recorded, refused
  CHECK(server->call({"HGET", "g:process", "run_id"}) == reply::bulk(run_id));
  s.acquire("t2");  // the same process, in its grace
  sleep_ms(static_cast<int>(lease_ms) + 50);
  s.acquire("t3");  // one lease later: granted
  CHECK(server->call({"ZCARD", "g"}) == reply::from_integer(1));

  // The record names another process (what a restarted or promoted server finds): a new grace.
  const std::string other(40, 'a');
  REQUIRE(server->call({"HSET", "g:process", "run_id", other}) == reply::from_integer(0));
  REQUIRE(data.hset("g:process", "run_id", other, 0) == 0);
  s.acquire("t4");
  CHECK(server->call({"HGET", "g:process", "run_id"}) == reply::bulk(run_id));
  sleep_ms(static_cast<int>(lease_ms) + 50);
  s.acquire("t5");  // t3's permit is past its lease by now, and reaped
  CHECK(server->call({"ZRANGE", "g", "0", "-1"}) == reply::array({reply::bulk("t5")}));

  const std::vector<reply> expected{reply::from_integer(0), reply::from_integer(0), reply::from_integer(1),
                                    reply::from_integer(0), reply::from_integer(1)};
  CHECK(s.real_replies == expected);
  CHECK(s.engine_replies == expected);
  REQUIRE(server->call({"FLUSHDB"}) == reply::status("OK"));
}
