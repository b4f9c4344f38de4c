// The shipped lease client (gate/asio/lease_client.hpp, the Asio driver of the
// sans-IO core) on a real io_context, over resp_transport, against a real
// redis-server: a protocol file of the project's own, loaded as a scenario
// loads it, acquired up to its limit, refused past it, renewed, released;
// the script-cache fallback; and a server that cannot be reached.
//
// The server is 127.0.0.1:$ADMITSIM_REDIS_PORT (default 6390), database 9,
// which the test flushes. Run:
//   tests/integration/run_with_redis.sh ctest --test-dir build -L redis
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/asio/lease_client.hpp"
#include "gate/asio/resp_transport.hpp"
#include "gate/asio/steady_env.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/scenario/protocol_loader.hpp"

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace admit;
using namespace std::chrono_literals;
using boost::system::error_code;

namespace {

using env = gate::steady_env<>;
template <class T>
using awaitable = asio::awaitable<T, asio::any_io_executor>;

int redis_port() {
  const char* p = std::getenv("ADMITSIM_REDIS_PORT");
  return p != nullptr ? std::atoi(p) : 6390;
}

asio::ip::tcp::endpoint server() {
  return {asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(redis_port())};
}

std::shared_ptr<const redis::protocol> load_protocol(const std::string& relative) {
  const fs::path file = fs::path(ADMITSIM_SOURCE_DIR) / relative;
  nlohmann::ordered_json doc = {{"gate", {{"protocol", file.filename().string()}}}};
  scenario::inline_protocol_files(doc, scenario::directory_of(file.string()), scenario::plain_file_reader());
  return std::make_shared<const redis::protocol>(scenario::read_protocol(doc["gate"]["protocol"], "/gate/protocol"));
}

// Forwards to the real transport and keeps the name of every command sent.
struct recording_transport {
  gate::resp_transport& inner;
  std::vector<std::string> sent{};

  template <class Token>
  auto async_command(const gate::command_request& req, Token&& token) {
    sent.push_back(req.argv.at(0));
    return inner.async_command(req, std::forward<Token>(token));
  }
};

// (A pack, not a braced list: GCC keeps an initializer_list's array badly across a co_await.)
template <class... Arg>
awaitable<redis::reply> command(gate::resp_transport& t, Arg... arg) {
  gate::command_request req;
  (req.argv.emplace_back(arg), ...);
  auto [ec, answer] = co_await t.async_command(req, asio::as_tuple(asio::use_awaitable));
  if (ec) throw std::runtime_error("redis-server at port " + std::to_string(redis_port()) + ": " + ec.message() +
                                   "; run the test with tests/integration/run_with_redis.sh");
  co_return answer;
}

gate::lease_client_config config(std::shared_ptr<const redis::protocol> p) {
  gate::lease_client_config c;
  c.key = "admitsim:test:lease_client";
  c.limit = 2;
  c.lease_ms = 10'000;
  c.acquire_timeout_ns = 300'000'000;
  c.backoff.delay_ns = 50'000'000;
  c.renew_every_ns = 1'000'000'000;
  c.proto = std::move(p);
  return c;
}

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Runs `body` on a fresh io_context to its end; rethrows what it threw.
template <class Body>
void run(Body body) {
  asio::io_context io;
  std::exception_ptr failed;
  asio::co_spawn(io, body(io.get_executor()), [&](std::exception_ptr e) { failed = e; });
  io.run();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace

TEST_CASE("the shipped client runs a protocol file against redis-server through the core", "[redis][lease_client]") {
  // Goal: one lease path from the core to a real server. Method: renewal.json, limit 2: two grants, a third
  // acquire that times out, a renewal, a release, a renewal of the released token, then the third granted.
  struct outcome {
    bool a = false, b = false, c_first = true, renewed = false, renewed_gone = true, c_second = false;
    error_code c_first_ec, release_a;
    std::int64_t c_attempts = 0, members = -1, members_after = -1;
  } o;
  run([&](asio::any_io_executor ex) -> awaitable<void> {
    gate::resp_transport real(ex, server(), 1s, 9);
    (void)co_await command(real, "FLUSHDB");
    recording_transport t{real};
    gate::lease_client<env, recording_transport> c(ex, t, config(load_protocol("gate/redis/protocols/renewal.json")),
                                                   wall_ms, [](std::int64_t ceiling) { return ceiling; });
    o.a = !(co_await c.acquire("a")).ec;
    o.b = !(co_await c.acquire("b")).ec;
    const gate::acquire_outcome third = co_await c.acquire("c");
    o.c_first = !third.ec;
    o.c_first_ec = third.ec;
    o.c_attempts = third.attempts;
    o.members = (co_await command(real, "ZCARD", "admitsim:test:lease_client")).integer;
    o.renewed = co_await c.renew("a");
    o.release_a = co_await c.release("a");
    o.renewed_gone = co_await c.renew("a");
    o.c_second = !(co_await c.acquire("c")).ec;
    (void)co_await c.release("b");
    (void)co_await c.release("c");
    o.members_after = (co_await command(real, "ZCARD", "admitsim:test:lease_client")).integer;
  });
  CHECK(o.a);
  CHECK(o.b);
  CHECK_FALSE(o.c_first);
  CHECK(o.c_first_ec == gate::gate_errc::acquire_timeout);
  CHECK(o.c_attempts >= 3);  // 300 ms of 50 ms backoff, the last attempt at the deadline
  CHECK(o.members == 2);
  CHECK(o.renewed);
  CHECK(!o.release_a);
  CHECK_FALSE(o.renewed_gone);
  CHECK(o.c_second);
  CHECK(o.members_after == 0);
}

TEST_CASE("after SCRIPT FLUSH the shipped client falls back from EVALSHA to EVAL on the real server", "[redis][lease_client]") {
  // Goal: the NOSCRIPT step is the server's answer, not a simulation's. Method: flush the script cache, acquire.
  std::vector<std::string> sent;
  bool granted = false;
  run([&](asio::any_io_executor ex) -> awaitable<void> {
    gate::resp_transport real(ex, server(), 1s, 9);
    (void)co_await command(real, "FLUSHDB");
    (void)co_await command(real, "SCRIPT", "FLUSH");
    recording_transport t{real};
    gate::lease_client<env, recording_transport> c(ex, t, config(load_protocol("gate/redis/protocols/server_time.json")),
                                                   wall_ms, [](std::int64_t ceiling) { return ceiling; });
    granted = !(co_await c.acquire("a")).ec;
    (void)co_await c.acquire("b");  // the script is cached now: EVALSHA alone
    (void)co_await c.release("a");
    (void)co_await c.release("b");
    sent = t.sent;
  });
  CHECK(granted);
  REQUIRE(sent.size() >= 3);
  CHECK(sent[0] == "EVALSHA");
  CHECK(sent[1] == "EVAL");
  CHECK(sent[2] == "EVALSHA");
}

TEST_CASE("a client whose server cannot be reached fails closed with unreachable", "[redis][lease_client]") {
  // Goal: fail closed on a real socket. Method: a loopback port with nothing listening; the acquire times out.
  gate::acquire_outcome got;
  run([&](asio::any_io_executor ex) -> awaitable<void> {
    asio::ip::tcp::acceptor closed(ex, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    const asio::ip::tcp::endpoint nowhere = closed.local_endpoint();
    closed.close();  // the port was free a moment ago and nothing listens on it now
    gate::resp_transport real(ex, nowhere, 200ms);
    auto cfg = config(load_protocol("gate/redis/protocols/server_time.json"));
    cfg.acquire_timeout_ns = 120'000'000;
    gate::lease_client<env, gate::resp_transport> c(ex, real, cfg, wall_ms, [](std::int64_t ceiling) { return ceiling; });
    got = co_await c.acquire("a");
  });
  CHECK(got.ec == gate::gate_errc::unreachable);
  CHECK(got.attempts >= 2);
}
