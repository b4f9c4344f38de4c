#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <catch2/catch.hpp>
#include <string>

#include "gate/asio/async_fifo_gate.hpp"
#include "gate/asio/finish_worker.hpp"
#include "sim/kernel/awaitable.hpp"
#include "sim/kernel/sim_env.hpp"

namespace asio = boost::asio;
using boost::system::error_code;
using namespace admit;
using namespace admit::sim;
using sim_gate = gate::async_fifo_gate<sim_env>;

namespace {
// Work that cannot be cancelled: a timer wait whose handler has no slot.
auto virtual_work(scheduler& s, vtime_ns d) {
  return [&s, d](auto done) {
    auto t = std::make_shared<sim_timer>(s);
    t->expires_after(d);
    t->async_wait([t, done = std::move(done)](error_code ec) mutable { done(ec); });
  };
}
}  // namespace

TEST_CASE("a cancelled caller keeps its lease until the work really ends", "[finish_worker]") {
  // Goal: the lease outlives the caller's cancellation. Method: cancel at 100 ms a caller whose
  // work lasts 350 ms; sample the gate's active count before and after the work ends.
  scheduler s;
  fifo::config c;
  c.max_active = 1;
  c.max_waiting = 1;
  sim_gate g(s.get_executor(), c);
  asio::cancellation_signal sig;
  std::string outcome;
  vtime_ns resumed_at = -1;
  auto handler = [&]() -> awaitable<void> {
    auto l = co_await g.async_acquire(use_awaitable);
    try {
      co_await gate::async_finish_worker(virtual_work(s, 350 * ms), use_awaitable);
      outcome = "completed";
    } catch (const boost::system::system_error& e) {
      outcome = e.code() == asio::error::operation_aborted ? "cancelled" : "failed";
    }
    resumed_at = s.now_ns();
  };
  asio::co_spawn(s.get_executor(), handler(),
                 asio::bind_cancellation_slot(sig.slot(), [](std::exception_ptr) {}));
  std::int64_t active_after_cancel = -1;
  s.schedule_at(100 * ms, [&] { sig.emit(asio::cancellation_type::terminal); });
  s.schedule_at(200 * ms, [&] { active_after_cancel = g.core().active(); });
  s.run();
  CHECK(active_after_cancel == 1);
  CHECK(outcome == "cancelled");
  CHECK(resumed_at == 350 * ms);
  CHECK(g.core().active() == 0);
}

TEST_CASE("an uncancelled worker reports its own result", "[finish_worker]") {
  // Goal: the normal path passes the work's result through. Method: callback token, no slot.
  scheduler s;
  error_code got = asio::error::fault;
  vtime_ns at = -1;
  gate::async_finish_worker(virtual_work(s, 7 * ms), [&](error_code ec) {
    got = ec;
    at = s.now_ns();
  });
  s.run();
  CHECK(!got);
  CHECK(at == 7 * ms);
}
