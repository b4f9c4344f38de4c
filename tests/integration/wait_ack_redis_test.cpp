// The acknowledge policy (client.acknowledge, docs/designs.md) against a real
// redis-server: the shipped lease_client, under the simulator's executor, with
// every command it builds sent to the server. The server that
// run_with_redis.sh starts has no replica, so WAIT 1 answers 0: the client
// must never report a permit and must leave the set empty (its release ran
// after every grant). Then the test starts a replica of that server on
// another loopback port (redis-server --replicaof, its own temporary folder,
// stopped by its process id), and the same client's first grant holds.
//
// The server is 127.0.0.1:$ADMITSIM_REDIS_PORT (default 6390), database 9,
// which the test flushes. Run:
//   tests/integration/run_with_redis.sh ctest --test-dir build -L redis
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/asio/lease_client.hpp"
#include "gate/redis/protocol.hpp"
#include "sim/kernel/awaitable.hpp"
#include "sim/kernel/sim_env.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/scenario/protocol_loader.hpp"
#include "tests/integration/agreement_support.hpp"

namespace asio = boost::asio;
namespace fs = std::filesystem;
using boost::system::error_code;
using namespace admit;
using admit::redis::reply;
using admit::redis::test::redis_client;

namespace {

const char* const how_to_start = "run it with: tests/integration/run_with_redis.sh ctest --test-dir build -L redis";

// Every protocol command goes to the real server at once (a blocking WAIT blocks the test's thread); the
// completion comes 1 ms later in simulated time. The protocol's wake_on is not used here.
struct real_transport {
  sim::scheduler& s;
  redis_client& server;
  std::vector<std::vector<std::string>> commands{};
  std::vector<reply> answers{};

  struct subscription {};
  subscription subscribe(std::string, bool, std::function<void()>) {
    FAIL("the wait_ack protocol has no wake_on channel");
    return {};
  }
  template <class Token>
  auto async_command(const gate::command_request& req, Token&& token) {
    return asio::async_initiate<Token, void(error_code, reply)>(
        [this, req](auto handler) {
          commands.push_back(req.argv);
          answers.push_back(server.call(req.argv));
          s.schedule_after(sim::ms, [h = std::move(handler), a = answers.back()]() mutable { std::move(h)(error_code{}, a); });
        },
        token);
  }
};

using client = gate::lease_client<sim::sim_env, real_transport>;

std::shared_ptr<const redis::protocol> wait_ack(std::int64_t timeout_ms) {
  const fs::path file = fs::path(ADMITSIM_SOURCE_DIR) / "scenarios/designs/wait_ack/protocol.json";
  nlohmann::ordered_json doc = {{"gate", {{"protocol", file.filename().string()}}}};
  scenario::inline_protocol_files(doc, file.parent_path().string(), scenario::plain_file_reader());
  auto p = std::make_shared<redis::protocol>(scenario::read_protocol(doc["gate"]["protocol"], "/gate/protocol"));
  REQUIRE(p->client.acknowledge.has_value());
  p->client.acknowledge->timeout_ms = timeout_ms;
  return p;
}

gate::acquire_outcome acquire_once(real_transport& t, std::shared_ptr<const redis::protocol> proto) {
  gate::lease_client_config cfg;
  cfg.key = "admitsim:wait";
  cfg.limit = 2;
  cfg.lease_ms = 15'000;
  cfg.acquire_timeout_ns = sim::sec;
  cfg.backoff.delay_ns = 200 * sim::ms;
  cfg.proto = std::move(proto);
  client c(t.s.get_executor(), t, cfg, [] { return std::int64_t{0}; }, [](std::int64_t x) { return x; });
  gate::acquire_outcome got;
  bool done = false;
  asio::co_spawn(t.s.get_executor(), c.acquire("tok"), [&](std::exception_ptr e, gate::acquire_outcome o) {
    REQUIRE(!e);
    got = o;
    done = true;
  });
  t.s.run();
  REQUIRE(done);
  return got;
}

std::string info_field(redis_client& c, const std::string& section, const std::string& field) {
  const reply r = c.call({"INFO", section});
  REQUIRE(r.type == reply::kind::bulk);
  const std::string key = field + ":";
  const auto at = r.text.find(key);
  if (at == std::string::npos) return "";
  const auto end = r.text.find_first_of("\r\n", at);
  return r.text.substr(at + key.size(), end - at - key.size());
}

// A replica of the test server on a free loopback port, in its own temporary folder; stopped (by its process
// id, from its pidfile) when this goes out of scope.
class replica_server {
 public:
  explicit replica_server(int primary_port) {
    dir_ = fs::temp_directory_path() / ("admitsim-wait-replica-" + std::to_string(primary_port));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (int p = primary_port + 100; p < primary_port + 110 && port_ == 0; ++p) {
      try {
        redis_client probe("127.0.0.1", p);
        continue;  // something answers there
      } catch (const std::exception&) {
      }
      const std::string cmd = "redis-server --port " + std::to_string(p) + " --bind 127.0.0.1 --save '' --appendonly no" +
                              " --replicaof 127.0.0.1 " + std::to_string(primary_port) + " --daemonize yes --pidfile " +
                              (dir_ / "replica.pid").string() + " --dir " + dir_.string() + " --logfile " +
                              (dir_ / "replica.log").string();
      if (std::system(cmd.c_str()) == 0) port_ = p;
    }
    for (int i = 0; i < 100 && pid_ == 0; ++i) {
      std::ifstream in(dir_ / "replica.pid");
      long pid = 0;
      if (in >> pid) pid_ = pid;
      else std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~replica_server() {
    if (pid_ > 0) {
      ::kill(static_cast<pid_t>(pid_), SIGTERM);
      for (int i = 0; i < 100 && ::kill(static_cast<pid_t>(pid_), 0) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  replica_server(const replica_server&) = delete;
  replica_server& operator=(const replica_server&) = delete;
  int port() const noexcept { return port_; }
  bool started() const noexcept { return pid_ > 0; }

 private:
  fs::path dir_;
  int port_ = 0;
  long pid_ = 0;
};

}  // namespace

TEST_CASE("wait_ack against a redis-server without a replica: WAIT answers 0, no permit, the set left empty",
          "[wait][redis]") {
  // Goal: with nobody to acknowledge, the client never works under a grant. Method: the design's protocol (WAIT
  // 1 50) polled for 1 s against the real server; every granting acquire is followed by WAIT (answered 0) and a
  // release; the outcome is acquire_timeout and the key holds no member.
  auto server = redis::test::connect_or_fail(how_to_start);
  REQUIRE(server->call({"FLUSHDB"}) == reply::status("OK"));
  REQUIRE(info_field(*server, "replication", "connected_slaves") == "0");
  sim::scheduler s;
  real_transport t{s, *server};
  const gate::acquire_outcome got = acquire_once(t, wait_ack(50));
  CHECK(got.ec == gate::gate_errc::acquire_timeout);
  CHECK(got.attempts >= 3);
  int waits = 0;
  for (std::size_t i = 0; i < t.commands.size(); ++i) {
    if (t.commands[i].front() != "WAIT") continue;
    ++waits;
    CHECK(t.commands[i] == std::vector<std::string>{"WAIT", "1", "50"});
    CHECK(t.answers[i] == reply::from_integer(0));
    // A grant came before it, a release after it.
    REQUIRE(i >= 1);
    CHECK(t.answers[i - 1] == reply::from_integer(1));
    REQUIRE(i + 1 < t.commands.size());
    CHECK(t.commands[i + 1].back() == "tok");
  }
  CHECK(waits == got.attempts);
  CHECK(server->call({"ZCARD", "admitsim:wait"}) == reply::from_integer(0));
}

TEST_CASE("wait_ack with a replica of the redis-server: the first grant is acknowledged and held", "[wait][redis]") {
  // Goal: WAIT's "yes" path on a real server. Method: start a replica on another loopback port, wait until the
  // primary counts it, then one acquire with WAIT 1 3000: granted at the first attempt, the member in the set
  // (and, once replicated, on the replica).
  auto server = redis::test::connect_or_fail(how_to_start);
  REQUIRE(server->call({"FLUSHDB"}) == reply::status("OK"));
  replica_server replica(redis::test::redis_port());
  REQUIRE(replica.started());
  bool linked = false;
  for (int i = 0; i < 200 && !linked; ++i) {
    linked = info_field(*server, "replication", "connected_slaves") == "1";
    if (linked) {
      redis_client r("127.0.0.1", replica.port());
      linked = info_field(r, "replication", "master_link_status") == "up";
    }
    if (!linked) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(linked);
  sim::scheduler s;
  real_transport t{s, *server};
  const gate::acquire_outcome got = acquire_once(t, wait_ack(3000));
  CHECK(!got.ec);
  CHECK(got.attempts == 1);
  REQUIRE(t.commands.size() >= 2);
  CHECK(t.commands.back() == std::vector<std::string>{"WAIT", "1", "3000"});
  CHECK(t.answers.back() == reply::from_integer(1));
  CHECK(server->call({"ZSCORE", "admitsim:wait", "tok"}).type == reply::kind::bulk);
  redis_client r("127.0.0.1", replica.port());
  REQUIRE(r.call({"SELECT", "9"}) == reply::status("OK"));
  CHECK(r.call({"ZSCORE", "admitsim:wait", "tok"}).type == reply::kind::bulk);
  REQUIRE(server->call({"DEL", "admitsim:wait"}) == reply::from_integer(1));
}
