#include "sim/world/run_guard.hpp"

#include "sim/scenario/duration.hpp"

namespace admit::world {

std::optional<inconclusive_reason> run_guard::reason(sim::run_status st, sim::vtime_ns now_ns,
                                                     sim::vtime_ns horizon_ns, std::uint64_t pending,
                                                     std::uint64_t total) const {
  const std::string left = std::to_string(pending) + " of " + std::to_string(total) + " requests had not ended";
  if (wall_hit_)
    return inconclusive_reason{"wall_limit", "the run used its wall-clock guard of " +
                                                 scenario::format_duration(max_wall_ns_) +
                                                 " (checks.max_wall) at simulated " +
                                                 scenario::format_duration(now_ns) + "; " + left};
  if (st == sim::run_status::event_limit)
    return inconclusive_reason{"event_budget", "the run used its budget of " + std::to_string(max_events_) +
                                                   " events (checks.max_events) at " +
                                                   scenario::format_duration(now_ns) + "; " + left};
  if (st == sim::run_status::time_limit && pending > 0)
    return inconclusive_reason{"horizon", "the run reached its horizon " + scenario::format_duration(horizon_ns) +
                                              " (checks.horizon) before the workload ended: " + left};
  return std::nullopt;
}

}  // namespace admit::world
