#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "sim/kernel/awaitable.hpp"

using namespace admit::sim;
namespace asio = boost::asio;
using boost::system::error_code;

TEST_CASE("a callback wait completes at its expiry", "[timer]") {
  // Goal: plain callbacks work. Method: two timers, check completion instants and codes.
  scheduler s;
  sim_timer a(s), b(s);
  std::vector<std::pair<vtime_ns, error_code>> done;
  a.expires_after(30 * ms);
  b.expires_after(10 * ms);
  a.async_wait([&](error_code ec) { done.emplace_back(s.now_ns(), ec); });
  b.async_wait([&](error_code ec) { done.emplace_back(s.now_ns(), ec); });
  s.run();
  REQUIRE(done.size() == 2);
  CHECK(done[0].first == 10 * ms);
  CHECK(done[1].first == 30 * ms);
  CHECK(!done[0].second);
  CHECK(!done[1].second);
}

TEST_CASE("cancel and re-arming abort pending waits", "[timer]") {
  // Goal: cancel() and expires_at() complete waits with operation_aborted, now.
  scheduler s;
  sim_timer t(s);
  std::vector<std::pair<vtime_ns, error_code>> done;
  t.expires_after(1 * sec);
  t.async_wait([&](error_code ec) { done.emplace_back(s.now_ns(), ec); });
  t.async_wait([&](error_code ec) { done.emplace_back(s.now_ns(), ec); });
  CHECK(t.pending_waits() == 2);
  s.schedule_at(5 * ms, [&] { CHECK(t.cancel() == 2); });
  s.run();
  REQUIRE(done.size() == 2);
  CHECK(done[0].first == 5 * ms);
  CHECK(done[0].second == asio::error::operation_aborted);
  CHECK(done[1].second == asio::error::operation_aborted);

  done.clear();
  t.expires_after(1 * sec);
  t.async_wait([&](error_code ec) { done.emplace_back(s.now_ns(), ec); });
  s.schedule_after(1 * ms, [&] {
    CHECK(t.expires_after(2 * ms) == 1);
    t.async_wait([&](error_code ec) { done.emplace_back(s.now_ns(), ec); });
  });
  s.run();
  REQUIRE(done.size() == 2);
  CHECK(done[0].second == asio::error::operation_aborted);
  CHECK(done[1].first == 5 * ms + 3 * ms);
  CHECK(!done[1].second);
}

TEST_CASE("the per-operation cancellation slot cancels one wait", "[timer][cancellation]") {
  // Goal: bound cancellation slots are honoured. Method: emit on a signal bound to one of two waits.
  scheduler s;
  sim_timer t(s);
  asio::cancellation_signal sig;
  std::vector<std::string> log;
  t.expires_after(1 * sec);
  t.async_wait(asio::bind_cancellation_slot(sig.slot(), [&](error_code ec) {
    log.push_back(std::string("bound:") + (ec ? "aborted" : "ok"));
  }));
  t.async_wait([&](error_code ec) { log.push_back(std::string("free:") + (ec ? "aborted" : "ok")); });
  s.schedule_at(2 * ms, [&] { sig.emit(asio::cancellation_type::terminal); });
  s.run();
  CHECK(log == std::vector<std::string>{"bound:aborted", "free:ok"});
  CHECK(s.now_ns() == 1 * sec);
  // After completion the slot is free again: a later emit must be harmless.
  sig.emit(asio::cancellation_type::terminal);
}

TEST_CASE("coroutines sleep on virtual time", "[timer][awaitable]") {
  // Goal: awaitable<T, sim_executor> actors work with co_spawn. Method: two actors interleave.
  scheduler s;
  std::vector<std::string> log;
  auto actor = [&](std::string name, vtime_ns step) -> awaitable<int> {
    for (int i = 0; i < 3; ++i) {
      co_await sleep_for(step);
      log.push_back(name + "@" + std::to_string(s.now_ns() / ms));
    }
    co_return 42;
  };
  int result = 0;
  asio::co_spawn(s.get_executor(), actor("a", 10 * ms), [&](std::exception_ptr e, int v) {
    CHECK(!e);
    result = v;
  });
  asio::co_spawn(s.get_executor(), actor("b", 15 * ms), asio::detached);
  s.run();
  CHECK(log == std::vector<std::string>{"a@10", "b@15", "a@20", "b@30", "a@30", "b@45"});
  CHECK(result == 42);
}

TEST_CASE("a deferred wait composes", "[timer][deferred]") {
  // Goal: the deferred token works. Method: build a deferred op, launch it later.
  scheduler s;
  sim_timer t(s);
  t.expires_after(4 * ms);
  auto op = t.async_wait(asio::deferred);
  vtime_ns at = -1;
  std::move(op)([&](error_code ec) {
    CHECK(!ec);
    at = s.now_ns();
  });
  s.run();
  CHECK(at == 4 * ms);
}

TEST_CASE("|| races a wait against a timeout and cancels the loser", "[timer][awaitable]") {
  // Goal: awaitable operators give timeouts. Method: a short wait beats a long one, and vice versa.
  using namespace asio::experimental::awaitable_operators;
  scheduler s;
  std::vector<std::string> log;
  auto wait_for = [&](vtime_ns d) -> awaitable<vtime_ns> {
    sim_timer t(co_await asio::this_coro::executor);
    t.expires_after(d);
    co_await t.async_wait(use_awaitable);
    co_return s.now_ns();
  };
  auto race = [&]() -> awaitable<void> {
    auto r = co_await (wait_for(50 * ms) || wait_for(200 * ms));
    CHECK(r.index() == 0);
    log.push_back("first@" + std::to_string(s.now_ns() / ms));
    auto r2 = co_await (wait_for(500 * ms) || wait_for(20 * ms));
    CHECK(r2.index() == 1);
    log.push_back("second@" + std::to_string(s.now_ns() / ms));
  };
  asio::co_spawn(s.get_executor(), race(), [](std::exception_ptr e) { CHECK(!e); });
  s.run();
  CHECK(log == std::vector<std::string>{"first@50", "second@70"});
  // The losers were cancelled, not left to fire: the run ends at 70 ms, not 570 ms.
  CHECK(s.now_ns() == 70 * ms);
}

TEST_CASE("a cancelled coroutine wait throws operation_aborted", "[timer][awaitable]") {
  // Goal: cancellation reaches a suspended actor. Method: co_spawn bound to a signal, emit it.
  scheduler s;
  asio::cancellation_signal sig;
  std::string outcome;
  auto sleeper = [&]() -> awaitable<void> {
    try {
      co_await sleep_for(10 * sec);
      outcome = "slept";
    } catch (const boost::system::system_error& e) {
      outcome = e.code() == asio::error::operation_aborted ? "aborted" : "other";
    }
  };
  asio::co_spawn(s.get_executor(), sleeper(),
                 asio::bind_cancellation_slot(sig.slot(), [](std::exception_ptr) {}));
  s.schedule_at(3 * ms, [&] { sig.emit(asio::cancellation_type::terminal); });
  s.run();
  CHECK(outcome == "aborted");
  CHECK(s.now_ns() == 3 * ms);
}

TEST_CASE("destroying a scheduler destroys suspended actors", "[timer][lifetime]") {
  // Goal: no leak or crash when a run ends with actors still waiting.
  // Method: a frame-owned object's destructor counts; it must run at teardown.
  auto destroyed = std::make_shared<int>(0);
  struct probe {
    std::shared_ptr<int> n;
    ~probe() { ++*n; }
  };
  {
    scheduler s;
    auto actor = [](std::shared_ptr<int> n) -> awaitable<void> {
      probe p{n};
      co_await sleep_for(1 * minute);
    };
    asio::co_spawn(s.get_executor(), actor(destroyed), asio::detached);
    asio::co_spawn(s.get_executor(), actor(destroyed), asio::detached);
    s.run_until(1 * sec);
    CHECK(*destroyed == 0);
  }
  CHECK(*destroyed == 2);
}

TEST_CASE("asio::post on the sim executor queues behind earlier work", "[executor]") {
  // Goal: post requires blocking.never and is honoured. Method: post from inside an event.
  scheduler s;
  std::vector<int> log;
  s.post([&] {
    asio::post(s.get_executor(), [&] { log.push_back(2); });
    log.push_back(1);
  });
  s.run();
  CHECK(log == std::vector<int>{1, 2});
}
