// run_guard: runs a world's scheduler within its event budget, its horizon
// and its wall-clock guard (checks.max_wall).
//
// The scheduler runs in slices of events; between slices the guard reads the
// wall clock. Slicing does not change which events run or in what order (a
// run stopped by its event count resumes exactly where it stopped), so the
// wall clock can only stop a run early, which makes it inconclusive; it never
// changes what a finished run reports. Wall time is read nowhere else in a run.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "sim/kernel/scheduler.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world {

class run_guard {
 public:
  run_guard(std::uint64_t max_events, sim::vtime_ns max_wall_ns)
      : budget_(max_events),
        max_events_(max_events),
        max_wall_ns_(max_wall_ns),
        start_(std::chrono::steady_clock::now()) {}

  // Runs until idle, stopped, `horizon_ns`, the budget or the wall guard.
  // The wall guard's stop returns event_limit with wall_hit() set.
  sim::run_status run(sim::scheduler& s, sim::vtime_ns horizon_ns) {
    constexpr std::uint64_t slice = std::uint64_t{1} << 16;
    for (;;) {
      if (budget_ == 0) return sim::run_status::event_limit;
      const std::uint64_t before = s.events_run();
      const sim::run_status st = s.run(sim::run_limits{std::min(budget_, slice), horizon_ns});
      budget_ -= std::min(budget_, s.events_run() - before);
      if (st != sim::run_status::event_limit) return st;
      if (budget_ == 0) return st;
      const auto wall = std::chrono::steady_clock::now() - start_;
      if (std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count() >= max_wall_ns_) {
        wall_hit_ = true;
        return st;
      }
    }
  }

  bool wall_hit() const { return wall_hit_; }
  std::uint64_t budget_left() const { return budget_; }

  // Why a run that ended with `st` is inconclusive, or nothing: the wall
  // guard, the event budget, or the horizon while `pending` requests (of
  // `total`) had not ended. (A system that must be idle earlier says so with
  // checks.liveness_horizon, which the worlds judge at that instant.)
  std::optional<inconclusive_reason> reason(sim::run_status st, sim::vtime_ns now_ns, sim::vtime_ns horizon_ns,
                                            std::uint64_t pending, std::uint64_t total) const;

 private:
  std::uint64_t budget_;
  std::uint64_t max_events_;
  sim::vtime_ns max_wall_ns_;
  std::chrono::steady_clock::time_point start_;
  bool wall_hit_ = false;
};

}  // namespace admit::world
