// portal: the service behind the gates, which every request's work reaches.
//
// It counts the work in flight at it (the work of every process lifetime:
// work a crashed process started runs on to its end) against its true cap
// (service.portal_cap, by default the sum of the gates' max_active). A portal
// partition is its fault: work that would start before the partition ends
// cannot reach it. The FIFO monitors judge what the count shows.
#pragma once

#include <algorithm>
#include <cstdint>

#include "gate/admit_assert.hpp"
#include "sim/kernel/vtime.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::world::fifo_world {

using sim::vtime_ns;

class portal {
 public:
  explicit portal(const scenario::scenario& sc) {
    std::int64_t cap_total = 0;
    for (const auto& g : sc.gates) cap_total += g.fifo.max_active;
    cap_ = sc.service.portal_cap.value_or(cap_total);
  }

  void begin() noexcept { ++in_flight_; }
  void end() {
    ADMIT_ASSERT(in_flight_ > 0, "work ends at the portal only after it began there");
    --in_flight_;
  }
  std::int64_t in_flight() const noexcept { return in_flight_; }
  std::int64_t cap() const noexcept { return cap_; }

  // A partition until `until_ns` (partitions overlap into their union).
  void cut_until(vtime_ns until_ns) noexcept { cut_until_ = std::max(cut_until_, until_ns); }
  bool reachable(vtime_ns now_ns) const noexcept { return now_ns >= cut_until_; }

 private:
  std::int64_t in_flight_ = 0;
  std::int64_t cap_ = 0;
  vtime_ns cut_until_ = 0;  // work cannot start before this
};

}  // namespace admit::world::fifo_world
