// lease_timeline: what the lease world records over time for the HTML report
// (the run record's timeline): the three levels, the fault windows and one
// lane per early item.
//
// Each part reports the level it owns when it changes (the live members of
// the gate key after a script, the open connections at the portal, the items
// waiting); the timeline samples all three at that instant. A run without a
// timeline (lease_run_options::timeline off) keeps the levels and records
// nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "sim/kernel/scheduler.hpp"
#include "sim/world/series_sampler.hpp"
#include "sim/world/timeline.hpp"

namespace admit::world::lease {

class lease_timeline {
 public:
  // `series`: the run record's timeline, or nullptr for none.
  lease_timeline(sim::scheduler& sched, timeline* series) : sched_(sched), series_(series) {}

  bool recording() const noexcept { return series_ != nullptr; }
  [[gnu::always_inline]] lane* lane_of(std::uint64_t number) { return series_ ? series_->lane_for(number) : nullptr; }
  void add_window(fault_window w) {
    if (series_) series_->add_window(std::move(w));
  }

  [[gnu::always_inline]] void set_members(std::int64_t n) {
    members_ = n;
    sample();
  }
  [[gnu::always_inline]] void set_portal_open(std::int64_t n) {
    portal_open_ = n;
    sample();
  }
  [[gnu::always_inline]] void set_waiting(std::size_t n) {
    waiting_ = static_cast<std::int64_t>(n);
    sample();
  }

 private:
  // The test inline (a run without a timeline records nothing), the sampling out of line.
  [[gnu::always_inline]] void sample() {
    if (series_) record_sample();
  }
  [[gnu::noinline]] void record_sample() {
    sampler_.sample(*series_, sched_.now_ns(), members_, portal_open_, waiting_);
  }

  sim::scheduler& sched_;
  timeline* series_;
  series_sampler sampler_;
  std::int64_t members_ = 0;
  std::int64_t portal_open_ = 0;
  std::int64_t waiting_ = 0;
};

}  // namespace admit::world::lease
