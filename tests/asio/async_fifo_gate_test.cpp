#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gate/asio/async_fifo_gate.hpp"
#include "gate/asio/steady_env.hpp"
#include "sim/kernel/awaitable.hpp"
#include "sim/kernel/sim_env.hpp"

namespace asio = boost::asio;
using boost::system::error_code;
using namespace admit;
using namespace admit::sim;
using sim_gate = gate::async_fifo_gate<sim_env>;
using lease_t = sim_gate::lease;

namespace {

fifo::config cfg(std::int64_t active, std::int64_t waiting, vtime_ns deadline) {
  fifo::config c;
  c.max_active = active;
  c.max_waiting = waiting;
  c.wait_deadline_ns = deadline;
  return c;
}

std::vector<std::string> statuses(const fifo::fifo_gate& g) {
  std::vector<std::string> out;
  for (const auto& e : g.snap().events) out.emplace_back(fifo::to_string(e.st));
  return out;
}

struct outcome {
  std::optional<error_code> ec;
  lease_t lease;
  vtime_ns at = -1;
};

// Starts an acquire whose result lands in `o`; optionally bound to a signal.
void acquire_into(sim_gate& g, scheduler& s, outcome& o, asio::cancellation_signal* sig = nullptr) {
  auto h = [&o, &s](error_code ec, lease_t l) {
    o.ec = ec;
    o.lease = std::move(l);
    o.at = s.now_ns();
  };
  if (sig != nullptr)
    g.async_acquire(asio::bind_cancellation_slot(sig->slot(), std::move(h)));
  else
    g.async_acquire(std::move(h));
}

}  // namespace

TEST_CASE("a free slot admits at once and the lease releases it", "[fifo_gate][asio]") {
  // Goal: admitted path and RAII release. Method: acquire, inspect, drop the lease.
  scheduler s;
  sim_gate g(s.get_executor(), cfg(1, 1, 150 * ms));
  outcome a;
  acquire_into(g, s, a);
  CHECK_FALSE(a.ec.has_value());  // never completes inline
  s.run();
  REQUIRE(a.ec.has_value());
  CHECK(!*a.ec);
  CHECK(static_cast<bool>(a.lease));
  CHECK(g.core().active() == 1);
  a.lease.reset();
  CHECK(g.core().active() == 0);
  CHECK(statuses(g.core()) == std::vector<std::string>{"admitted", "released"});
}

TEST_CASE("waiters are promoted in arrival order", "[fifo_gate][asio]") {
  // Goal: FIFO promotion through the adapter. Method: one holder, three waiters, release in turn.
  scheduler s;
  sim_gate g(s.get_executor(), cfg(1, 3, 10 * sec));
  outcome a, b, c, d;
  acquire_into(g, s, a);
  acquire_into(g, s, b);
  acquire_into(g, s, c);
  acquire_into(g, s, d);
  s.run_until(1 * ms);
  CHECK(g.core().waiting() == 3);
  s.schedule_at(10 * ms, [&] { a.lease.reset(); });
  s.schedule_at(20 * ms, [&] { b.lease.reset(); });
  s.schedule_at(30 * ms, [&] { c.lease.reset(); });
  s.run_until(40 * ms);
  CHECK(b.at == 10 * ms);
  CHECK(c.at == 20 * ms);
  CHECK(d.at == 30 * ms);
  CHECK(static_cast<bool>(d.lease));
  d.lease.reset();
  s.run();
  CHECK(g.core().active() == 0);
  CHECK(g.core().waiting() == 0);
}

TEST_CASE("a full queue refuses with queue_full", "[fifo_gate][asio]") {
  // Goal: 429 path. Method: fill one slot and one queue place, then acquire again.
  scheduler s;
  sim_gate g(s.get_executor(), cfg(1, 1, 150 * ms));
  outcome a, b, c;
  acquire_into(g, s, a);
  acquire_into(g, s, b);
  acquire_into(g, s, c);
  s.run_until(1 * ms);
  REQUIRE(c.ec.has_value());
  CHECK(*c.ec == gate::gate_errc::queue_full);
  CHECK_FALSE(static_cast<bool>(c.lease));
  CHECK(statuses(g.core()) == std::vector<std::string>{"admitted", "queued", "queue_full"});
}

TEST_CASE("a waiter expires at its deadline with wait_timeout", "[fifo_gate][asio]") {
  // Goal: 503 path at exactly the deadline. Method: hold the slot past the waiter's deadline.
  scheduler s;
  sim_gate g(s.get_executor(), cfg(1, 1, 150 * ms));
  outcome a, b;
  acquire_into(g, s, a);
  s.schedule_at(20 * ms, [&] { acquire_into(g, s, b); });
  s.run();
  REQUIRE(b.ec.has_value());
  CHECK(*b.ec == gate::gate_errc::wait_timeout);
  CHECK(b.at == 170 * ms);
  CHECK(g.core().waiting() == 0);
  CHECK(g.core().active() == 1);
}

TEST_CASE("cancelling a waiter removes it", "[fifo_gate][asio][cancellation]") {
  // Goal: per-operation cancellation while queued. Method: emit on the bound signal.
  scheduler s;
  sim_gate g(s.get_executor(), cfg(1, 2, 10 * sec));
  asio::cancellation_signal sig;
  outcome a, b;
  acquire_into(g, s, a);
  acquire_into(g, s, b, &sig);
  s.schedule_at(5 * ms, [&] { sig.emit(asio::cancellation_type::terminal); });
  s.run();
  REQUIRE(b.ec.has_value());
  CHECK(*b.ec == asio::error::operation_aborted);
  CHECK(b.at == 5 * ms);
  CHECK(g.core().waiting() == 0);
  CHECK(g.pending_waiters() == 0);
  CHECK(statuses(g.core()) == std::vector<std::string>{"admitted", "queued", "wait_cancelled"});
}

TEST_CASE("promotion beats a cancellation: the handed-over lease is released once", "[fifo_gate][asio][race]") {
  // Goal: the seed's cancellation race. Method: release and cancel in one event, before the claim runs.
  scheduler s;
  sim_gate g(s.get_executor(), cfg(1, 2, 10 * sec));
  asio::cancellation_signal sig;
  outcome a, b, c;
  acquire_into(g, s, a);
  acquire_into(g, s, b, &sig);
  acquire_into(g, s, c);
  s.schedule_at(50 * ms, [&] {
    a.lease.reset();                                // B is promoted inside the core ...
    sig.emit(asio::cancellation_type::terminal);    // ... but gives up before resuming
  });
  s.run();
  REQUIRE(b.ec.has_value());
  CHECK(*b.ec == asio::error::operation_aborted);
  REQUIRE(c.ec.has_value());
  CHECK(!*c.ec);
  CHECK(c.at == 50 * ms);
  CHECK(g.core().active() == 1);
  CHECK(statuses(g.core()) == std::vector<std::string>{"admitted", "queued", "queued", "released",
                                                       "promoted", "released", "promoted",
                                                       "wait_cancelled"});
  c.lease.reset();
  CHECK(g.core().active() == 0);
  CHECK(g.core().totals().released == 3);
}

TEST_CASE("promotion beats the deadline at the same instant: released once, then wait_timeout", "[fifo_gate][asio][race]") {
  // Goal: tie between a release and a deadline. Method: the release is scheduled before B's deadline
  // timer and the claim is posted after it, so at 100 ms the order is release, deadline, claim (the
  // tie rule): promotion wins, then the deadline undoes the handover.
  scheduler s;
  sim_gate g(s.get_executor(), cfg(1, 1, 100 * ms));
  outcome a, b;
  acquire_into(g, s, a);
  s.schedule_at(100 * ms, [&] { a.lease.reset(); });
  acquire_into(g, s, b);  // deadline at 100 ms, scheduled after the release
  s.run();
  REQUIRE(b.ec.has_value());
  CHECK(*b.ec == gate::gate_errc::wait_timeout);
  CHECK(g.core().active() == 0);
  CHECK(b.at == 100 * ms);
  CHECK(statuses(g.core()) ==
        std::vector<std::string>{"admitted", "queued", "released", "promoted", "released", "wait_timeout"});
}

TEST_CASE("the adapter serves use_awaitable with as_tuple", "[fifo_gate][asio][awaitable]") {
  // Goal: coroutine callers. Method: two actors contend for one slot.
  scheduler s;
  sim_gate g(s.get_executor(), cfg(1, 1, 1 * sec));
  std::vector<std::string> log;
  auto actor = [&](std::string name, vtime_ns hold) -> awaitable<void> {
    auto [ec, l] = co_await g.async_acquire(asio::as_tuple(use_awaitable));
    if (ec) {
      log.push_back(name + ":" + ec.message());
      co_return;
    }
    log.push_back(name + ":in@" + std::to_string(s.now_ns() / ms));
    co_await sleep_for(hold);
  };
  asio::co_spawn(s.get_executor(), actor("a", 300 * ms), asio::detached);
  asio::co_spawn(s.get_executor(), actor("b", 10 * ms), asio::detached);
  asio::co_spawn(s.get_executor(), actor("c", 10 * ms), asio::detached);
  s.run();
  CHECK(log == std::vector<std::string>{"a:in@0", "c:queue_full", "b:in@300"});
  CHECK(g.core().active() == 0);
}

TEST_CASE("the same adapter runs on a real io_context", "[fifo_gate][asio][steady]") {
  // Goal: the shipped environment compiles and works. Method: admit, queue, promote on an io_context.
  asio::io_context io;
  using real_gate = gate::async_fifo_gate<gate::steady_env<asio::io_context::executor_type>>;
  real_gate g(io.get_executor(), cfg(1, 1, 10 * sec));
  std::vector<std::string> log;
  real_gate::lease held;
  g.async_acquire([&](error_code ec, real_gate::lease l) {
    log.push_back(ec ? ec.message() : "a");
    held = std::move(l);
  });
  g.async_acquire([&](error_code ec, real_gate::lease l) {
    log.push_back(ec ? ec.message() : "b");
    l.reset();
  });
  io.run_one();
  CHECK(log == std::vector<std::string>{"a"});
  held.reset();
  io.run();
  CHECK(log == std::vector<std::string>{"a", "b"});
  CHECK(g.core().active() == 0);
}

namespace {

// A gate core of a user's own (gate/fifo/gate_core.hpp): one slot, no queue,
// counting every call, so the test sees that the adapter called it.
struct counting_core {
  explicit counting_core(const fifo::config&) {}
  int calls = 0;
  bool held = false;
  fifo::acquire_result acquire(fifo::ticket_id, std::int64_t) {
    ++calls;
    if (held) return {fifo::acquire_outcome::queue_full, 0};
    held = true;
    return {fifo::acquire_outcome::admitted, 0};
  }
  fifo::release_result release(std::int64_t) {
    ++calls;
    const bool ok = held;
    held = false;
    return {ok, std::nullopt};
  }
  bool claim(fifo::ticket_id, std::int64_t) { return false; }
  fifo::leave_result expire(fifo::ticket_id, std::int64_t) { return {fifo::leave_outcome::not_waiting, std::nullopt}; }
  fifo::leave_result cancel(fifo::ticket_id, std::int64_t) { return {fifo::leave_outcome::not_waiting, std::nullopt}; }
};
static_assert(fifo::gate_core<counting_core>);

}  // namespace

TEST_CASE("the adapter drives a core of one's own on a real io_context", "[fifo_gate][asio][steady][own_core]") {
  // Goal: async_fifo_gate runs any fifo::gate_core, as a service would. Method: a one-slot core
  // without a queue: the first acquire gets the lease, the second 429, and the lease returns on reset.
  asio::io_context io;
  using own_gate = gate::async_fifo_gate<gate::steady_env<asio::io_context::executor_type>, counting_core>;
  own_gate g(io.get_executor(), cfg(1, 0, 10 * sec));
  std::vector<std::string> log;
  own_gate::lease held;
  g.async_acquire([&](error_code ec, own_gate::lease l) {
    log.push_back(ec ? ec.message() : "a");
    held = std::move(l);
  });
  g.async_acquire([&](error_code ec, own_gate::lease) { log.push_back(ec == gate::gate_errc::queue_full ? "b:429" : "b:?"); });
  io.run();
  CHECK(log == std::vector<std::string>{"a", "b:429"});
  CHECK(g.core().held);
  held.reset();
  CHECK_FALSE(g.core().held);
  CHECK(g.core().calls == 3);
}

TEST_CASE("tearing down with queued waiters leaks nothing", "[fifo_gate][asio][lifetime]") {
  // Goal: shutdown order is safe. Method: end a run with a holder and a waiter still pending.
  auto s = std::make_unique<scheduler>();
  {
    sim_gate g(s->get_executor(), cfg(1, 1, 10 * sec));
    auto actor = [&g]() -> awaitable<void> {
      auto l = co_await g.async_acquire(use_awaitable);
      co_await sleep_for(1 * minute);
    };
    asio::co_spawn(s->get_executor(), actor(), asio::detached);
    asio::co_spawn(s->get_executor(), actor(), asio::detached);
    s->run_until(1 * sec);
    CHECK(g.core().active() == 1);
    CHECK(g.core().waiting() == 1);
    s->shutdown();  // destroys the holder's frame: its lease returns the slot to the waiter
    CHECK(g.core().totals().released == 1);
    CHECK(g.core().waiting() == 0);
    CHECK(g.core().handed_over() == 1);  // its claim was dropped unrun with the scheduler's queue
  }
}

namespace {

// The simulator's environment with a clock a test can set back: a core fed a
// time before an earlier input's breaks its invariant (ADMIT_ASSERT) in release.
struct skewed_env : sim_env {
  static inline std::int64_t back_ns = 0;
  static std::int64_t now_ns(const executor_type& ex) noexcept { return ex.sched().now_ns() - back_ns; }
};
using skewed_gate = gate::async_fifo_gate<skewed_env>;

}  // namespace

TEST_CASE("a broken invariant on release reaches the caller as an assertion, not std::terminate",
          "[fifo_gate][asio][assert]") {
  // Goal: lease::reset() and the lease's destructor report a broken core invariant the way every other
  // path does (admit::assertion_failure, which the CLI prints with the seed and the replay command).
  // Method: acquire at 10 ms, set the clock 5 ms back, then release: the core's "time moved backwards"
  // assertion fires inside the release.
  scheduler s;
  skewed_gate g(s.get_executor(), cfg(2, 0, 1'000'000'000));
  std::optional<skewed_gate::lease> held;
  auto grab = [&] {
    g.async_acquire([&](error_code ec, skewed_gate::lease l) {
      REQUIRE_FALSE(ec);
      held.emplace(std::move(l));
    });
  };
  s.schedule_at(10'000'000, grab);
  s.run();
  REQUIRE(held);
  skewed_env::back_ns = 5'000'000;
  // An explicit reset throws to its caller.
  CHECK_THROWS_AS(held->reset(), admit::assertion_failure);
  CHECK_FALSE(*held);
  // A destructor cannot throw: the gate keeps the failure and its next call raises it.
  skewed_env::back_ns = 0;
  held.reset();
  s.schedule_at(20'000'000, grab);
  s.run();
  REQUIRE(held);
  skewed_env::back_ns = 15'000'000;
  held.reset();  // ~lease: the release fails inside
  skewed_env::back_ns = 0;
  CHECK_THROWS_WITH(g.rethrow_failure(), Catch::Contains("time moved backwards"));
  CHECK_NOTHROW(g.rethrow_failure());  // raised once
}
