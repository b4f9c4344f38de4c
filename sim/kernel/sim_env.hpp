// sim_env: the environment in which the gate adapters (gate/asio) run on the
// simulator: the sim executor, sim_timer, and the scheduler's virtual clock.
#pragma once

#include <cstdint>

#include "sim/kernel/sim_executor.hpp"
#include "sim/kernel/sim_timer.hpp"

namespace admit::sim {

struct sim_env {
  using executor_type = sim_executor;
  using timer_type = sim_timer;
  static std::int64_t now_ns(const executor_type& ex) noexcept { return ex.sched().now_ns(); }
  static void expires_at(timer_type& t, std::int64_t deadline_ns) { t.expires_at(deadline_ns); }
};

}  // namespace admit::sim
