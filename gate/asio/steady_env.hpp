// steady_env: runs the gate adapters on a real Asio executor and the
// monotonic clock. This is the environment a service would ship with; the
// simulator substitutes sim::sim_env (virtual time) for it.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>

namespace admit::gate {

template <class Executor = boost::asio::any_io_executor>
struct steady_env {
  using executor_type = Executor;
  using clock = std::chrono::steady_clock;
  using timer_type = boost::asio::basic_waitable_timer<clock, boost::asio::wait_traits<clock>, Executor>;

  static std::int64_t now_ns(const executor_type&) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now().time_since_epoch())
        .count();
  }
  static void expires_at(timer_type& t, std::int64_t deadline_ns) {
    t.expires_at(clock::time_point(std::chrono::duration_cast<clock::duration>(
        std::chrono::nanoseconds(deadline_ns))));
  }
};

}  // namespace admit::gate
