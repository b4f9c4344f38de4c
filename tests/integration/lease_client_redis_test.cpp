// The shipped lease client (gate/asio/lease_client.hpp, the Asio driver of the
// sans-IO core) on a real io_context, over resp_transport, against a real
// redis-server: a protocol file of the project's own, loaded as a scenario
// loads it, acquired up to its limit, refused past it, renewed, released;
// the script-cache fallback; a server that cannot be reached; and waiters
// woken by a release's PUBLISH or SPUBLISH (the transport's subscriber
// connection), or not woken when the channel is of the other kind.
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

// server_time.json with a release that publishes on KEYS[2] ({key}:free) by `publish` (PUBLISH or SPUBLISH),
// and a client that listens there (on a shard channel when `wake_sharded`).
std::shared_ptr<const redis::protocol> waking_protocol(const std::string& publish, bool wake_sharded) {
  const fs::path file = fs::path(ADMITSIM_SOURCE_DIR) / "gate/redis/protocols/server_time.json";
  nlohmann::ordered_json doc = {{"gate", {{"protocol", file.filename().string()}}}};
  scenario::inline_protocol_files(doc, scenario::directory_of(file.string()), scenario::plain_file_reader());
  nlohmann::ordered_json& p = doc["gate"]["protocol"];
  p["scripts"]["release"] = {{"source", "local gone = redis.call('ZREM', KEYS[1], ARGV[1])\n"
                                        "redis.call('" + publish + "', KEYS[2], 'free')\n"
                                        "return gone\n"},
                             {"origin", "publishing_release.lua"}};
  p["release"]["keys"] = {"{key}", "{key}:free"};
  p["client"]["wake_on"] = {{"channel", "{key}:free"}, {"sharded", wake_sharded}};
  return std::make_shared<const redis::protocol>(scenario::read_protocol(p, "/gate/protocol"));
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

struct wake_run {
  bool holder_granted = false;
  error_code holder_released;
  gate::acquire_outcome waiter;
  std::chrono::steady_clock::duration waited{};  // the waiter's acquire, from its start to its end
};

// One permit. A holder takes it; a waiter (its own transport and client, a
// fixed retry of `delay_ns`) finds the gate full and backs off listening on
// the protocol's channel; 300 ms later the holder releases.
wake_run holder_and_waiter(std::shared_ptr<const redis::protocol> p, std::int64_t delay_ns) {
  wake_run o;
  std::exception_ptr waiter_failed;
  run([&](asio::any_io_executor ex) -> awaitable<void> {
    gate::resp_transport holder_t(ex, server(), 1s, 9);
    (void)co_await command(holder_t, "FLUSHDB");
    gate::lease_client_config cfg = config(p);
    cfg.limit = 1;
    cfg.acquire_timeout_ns = 20'000'000'000;
    cfg.backoff.delay_ns = delay_ns;
    const auto fixed = [](std::int64_t ceiling) { return ceiling; };
    gate::lease_client<env, gate::resp_transport> holder(ex, holder_t, cfg, wall_ms, fixed);
    gate::resp_transport waiter_t(ex, server(), 1s, 9);
    gate::lease_client<env, gate::resp_transport> waiter(ex, waiter_t, cfg, wall_ms, fixed);
    o.holder_granted = !(co_await holder.acquire("holder")).ec;
    // The waiter runs beside this body, which waits on `done` for its end.
    asio::steady_timer done(ex, asio::steady_timer::time_point::max());
    bool finished = false;
    const auto start = std::chrono::steady_clock::now();
    asio::co_spawn(ex, waiter.acquire("waiter"), [&](std::exception_ptr e, gate::acquire_outcome out) {
      o.waited = std::chrono::steady_clock::now() - start;
      o.waiter = out;
      waiter_failed = e;
      finished = true;
      done.cancel();
    });
    asio::steady_timer pause(ex, 300ms);
    co_await pause.async_wait(asio::use_awaitable);
    o.holder_released = co_await holder.release("holder");
    if (!finished) (void)co_await done.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!o.waiter.ec) (void)co_await waiter.release("waiter");
  });
  if (waiter_failed) std::rethrow_exception(waiter_failed);
  return o;
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

// The wake-ups below are timed on the steady clock with wide margins: a
// woken waiter takes a few ms after the release at 300 ms, one not woken
// waits its whole retry delay.

TEST_CASE("a release's PUBLISH wakes a waiter listening on the channel", "[redis][lease_client][wake]") {
  // Goal: wake_on over the real server's pub/sub. Method: a 5s retry; the holder releases at 300ms and its
  // script PUBLISHes on {key}:free; the waiter, SUBSCRIBEd, is granted at its second attempt well before 5s.
  const wake_run o = holder_and_waiter(waking_protocol("PUBLISH", false), 5'000'000'000);
  CHECK(o.holder_granted);
  CHECK(!o.holder_released);
  CHECK(!o.waiter.ec);
  CHECK(o.waiter.attempts == 2);
  CHECK(o.waited >= 250ms);
  CHECK(o.waited < 2s);
}

TEST_CASE("a release's SPUBLISH wakes a waiter listening on the shard channel", "[redis][lease_client][wake]") {
  // Goal: the same through a shard channel. Method: as above, with SPUBLISH and wake_on {"sharded": true}.
  const wake_run o = holder_and_waiter(waking_protocol("SPUBLISH", true), 5'000'000'000);
  CHECK(o.holder_granted);
  CHECK(!o.holder_released);
  CHECK(!o.waiter.ec);
  CHECK(o.waiter.attempts == 2);
  CHECK(o.waited >= 250ms);
  CHECK(o.waited < 2s);
}

TEST_CASE("a PUBLISH does not wake a waiter listening on the shard channel", "[redis][lease_client][wake]") {
  // Goal: the two kinds of channel stay apart on the real server. Method: the release PUBLISHes while the waiter
  // SSUBSCRIBEs to the same name: it waits out its 1s retry, then is granted.
  const wake_run o = holder_and_waiter(waking_protocol("PUBLISH", true), 1'000'000'000);
  CHECK(o.holder_granted);
  CHECK(!o.holder_released);
  CHECK(!o.waiter.ec);
  CHECK(o.waiter.attempts == 2);
  CHECK(o.waited >= 900ms);
}

TEST_CASE("the shipped client sets up permit_ids and gives back the permit ids the server drew", "[redis][lease_client]") {
  // Goal: set-up and {permit} on the real server. Method: scenarios/protocols/permit_ids (limit 2): acquires before
  // the set-up are refused (no counter); after it, two grants each carry an id, a third is refused, the first id's
  // release frees its permit (the counter goes back to 1), and the third is granted then. A set-up call its rule
  // reads as not done fails with setup_not_done.
  struct outcome {
    error_code before, set_up, third_first, release_a, again;
    bool a = false, b = false, third_second = false;
    std::string free_after_release, taken_fields;
  } o;
  run([&](asio::any_io_executor ex) -> awaitable<void> {
    gate::resp_transport real(ex, server(), 1s, 9);
    (void)co_await command(real, "FLUSHDB");
    auto p = load_protocol("scenarios/protocols/permit_ids/protocol.json");
    gate::lease_client<env, gate::resp_transport> c(ex, real, config(p), wall_ms,
                                                    [](std::int64_t ceiling) { return ceiling; });
    o.before = (co_await c.acquire("early")).ec;
    o.set_up = co_await c.setup();
    o.a = !(co_await c.acquire("a")).ec;
    o.b = !(co_await c.acquire("b")).ec;
    o.taken_fields = std::to_string((co_await command(real, "HLEN", "admitsim:test:lease_client:taken")).integer);
    o.third_first = (co_await c.acquire("c")).ec;
    o.release_a = co_await c.release("a");
    o.free_after_release = (co_await command(real, "GET", "admitsim:test:lease_client:free")).text;
    o.third_second = !(co_await c.acquire("c")).ec;
    (void)co_await c.release("b");
    (void)co_await c.release("c");
    // SET ... NX answers nil once the counter exists: a rule that wants OK reads it as not done.
    auto strict = std::make_shared<redis::protocol>(*p);
    strict->setup.calls.front().rule = redis::reply_rule::ok_status;
    gate::lease_client<env, gate::resp_transport> s(ex, real, config(strict), wall_ms,
                                                    [](std::int64_t ceiling) { return ceiling; });
    o.again = co_await s.setup();
  });
  CHECK(o.before == gate::gate_errc::acquire_timeout);
  CHECK(!o.set_up);
  CHECK(o.a);
  CHECK(o.b);
  CHECK(o.taken_fields == "2");
  CHECK(o.third_first == gate::gate_errc::acquire_timeout);
  CHECK(!o.release_a);
  CHECK(o.free_after_release == "1");
  CHECK(o.third_second);
  CHECK(o.again == gate::gate_errc::setup_not_done);
}

TEST_CASE("pubsub_waiter's own SPUBLISH wakes its waiter on the real server", "[redis][lease_client][wake]") {
  // Goal: a protocol file of the project's own, unchanged, wakes its waiters. Method: scenarios/protocols/
  // pubsub_waiter (a 3s poll, a shard channel) with one permit: the waiter is granted right after the release.
  auto p = load_protocol("scenarios/protocols/pubsub_waiter/protocol.json");
  const wake_run o = holder_and_waiter(p, 3'000'000'000);
  CHECK(o.holder_granted);
  CHECK(!o.holder_released);
  CHECK(!o.waiter.ec);
  CHECK(o.waiter.attempts == 2);
  CHECK(o.waited >= 250ms);
  CHECK(o.waited < 2s);
}
