// series_sampler: feeds a run's levels (in flight at the gate, in flight at
// the portal, waiting) into its timeline at every change.
//
// Why a part of its own: most changes land in the bucket the last sample
// touched and bring the same three levels back (a connection opens and
// closes within one bucket, a queued item is taken at once). Such a sample
// changes nothing in the timeline, and the sampler leaves it out without
// asking the timeline. Both worlds sample the same way.
#pragma once

#include <cstdint>

#include "sim/kernel/vtime.hpp"
#include "sim/world/timeline.hpp"

namespace admit::world {

class series_sampler {
 public:
  // Samples the three levels at `t` into `series`, unless they repeat the
  // last sample inside its bucket.
  void sample(timeline& series, vtime_ns t, std::int64_t gate, std::int64_t portal, std::int64_t waiting) {
    if (t < bucket_end_ns_ && gate == gate_ && portal == portal_ && waiting == waiting_) return;
    series.sample(t, gate, portal, waiting);
    const vtime_ns width = series.bucket_width_ns();  // the bucket widths change only in sample()
    bucket_end_ns_ = (t / width + 1) * width;
    gate_ = gate;
    portal_ = portal;
    waiting_ = waiting;
  }

 private:
  vtime_ns bucket_end_ns_ = 0;  // the end of the last sample's bucket (0: none yet)
  std::int64_t gate_ = 0;
  std::int64_t portal_ = 0;
  std::int64_t waiting_ = 0;
};

}  // namespace admit::world
