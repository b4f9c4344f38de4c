// timeline: what a run looked like over time, in bounded memory, for the
// HTML report's plots.
//
// Series. In-flight as the gate sees it, in-flight as the portal sees it,
// and the queue length, sampled at every change. Time is cut into at most
// `max_buckets` equal buckets; when a run outgrows them the bucket width
// doubles and neighbours merge. A bucket keeps the maximum and the minimum of
// each series inside it, so a peak over the cap is never smoothed away
// however long the run.
//
// Windows and lanes. Fault windows (kind, target, start, end) are listed as
// they happen (bounded). For small runs every request's lifecycle is kept
// for swimlanes: arrival, lease granted, work start and end at the portal,
// the moment its client gave up, and how it ended.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/kernel/vtime.hpp"

namespace admit::world {

using sim::vtime_ns;

struct timeline_bucket {
  std::int64_t gate_max = 0, gate_min = 0;
  std::int64_t portal_max = 0, portal_min = 0;
  std::int64_t waiting_max = 0, waiting_min = 0;
  bool touched = false;  // a sample fell in it (else it repeats the level before)
};

struct fault_window {
  std::string kind;
  std::string target;
  vtime_ns start_ns = 0;
  vtime_ns end_ns = 0;  // == start_ns for an instant (a clock step)
};

struct lane {
  std::uint64_t number = 0;     // request or item number
  std::string id;               // request id when it has one
  std::int64_t worker = -1;     // lease runs: the worker that took it
  vtime_ns arrived_ns = -1;
  vtime_ns granted_ns = -1;     // lease granted
  vtime_ns work_start_ns = -1;  // at the portal
  vtime_ns work_end_ns = -1;
  vtime_ns gave_up_ns = -1;     // the client stopped waiting
  vtime_ns ended_ns = -1;
  std::string outcome;
};

class timeline {
 public:
  static constexpr std::size_t max_buckets = 1024;
  static constexpr std::size_t max_lanes = 400;
  static constexpr std::size_t max_windows = 1000;

  // Samples the three series at `t` (call after every change).
  void sample(vtime_ns t, std::int64_t gate, std::int64_t portal, std::int64_t waiting) {
    if (t < 0) t = 0;
    // Most samples fall in the bucket the last one touched: no search.
    const bool same_bucket = t < touched_end_ns_ && t >= touched_begin_ns_;
    if (same_bucket && gate == last_gate_ && portal == last_portal_ && waiting == last_waiting_) return;
    std::size_t i = touched_index_;
    if (!same_bucket) {
      while (t >= width_ns_ * static_cast<vtime_ns>(max_buckets)) widen();
      i = static_cast<std::size_t>(t / width_ns_);
    }
    if (buckets_.size() <= i) {
      const timeline_bucket carry = level_bucket();
      buckets_.resize(i + 1, carry);
    }
    timeline_bucket& b = buckets_[i];
    if (!b.touched) {
      b = timeline_bucket{gate, gate, portal, portal, waiting, waiting, true};
      // The level before the first sample in this bucket counts too.
      b.gate_max = std::max(b.gate_max, last_gate_);
      b.gate_min = std::min(b.gate_min, last_gate_);
      b.portal_max = std::max(b.portal_max, last_portal_);
      b.portal_min = std::min(b.portal_min, last_portal_);
      b.waiting_max = std::max(b.waiting_max, last_waiting_);
      b.waiting_min = std::min(b.waiting_min, last_waiting_);
    } else {
      b.gate_max = std::max(b.gate_max, gate);
      b.gate_min = std::min(b.gate_min, gate);
      b.portal_max = std::max(b.portal_max, portal);
      b.portal_min = std::min(b.portal_min, portal);
      b.waiting_max = std::max(b.waiting_max, waiting);
      b.waiting_min = std::min(b.waiting_min, waiting);
    }
    last_gate_ = gate;
    last_portal_ = portal;
    last_waiting_ = waiting;
    // Remember the bucket (widen() forgets it: indices change).
    if (!same_bucket) {
      touched_index_ = i;
      touched_begin_ns_ = static_cast<vtime_ns>(i) * width_ns_;
      touched_end_ns_ = touched_begin_ns_ + width_ns_;
    }
  }

  void add_window(fault_window w) {
    if (windows_.size() < max_windows) windows_.push_back(std::move(w));
    else ++windows_dropped_;
  }

  // A lane for request `number` (kept only for the first max_lanes requests).
  lane* lane_for(std::uint64_t number) {
    if (number == 0 || number > max_lanes) return nullptr;
    if (lanes_.size() < number) lanes_.resize(number);
    lane& l = lanes_[number - 1];
    l.number = number;
    return &l;
  }

  vtime_ns bucket_width_ns() const { return width_ns_; }
  const std::vector<timeline_bucket>& buckets() const { return buckets_; }
  const std::vector<fault_window>& windows() const { return windows_; }
  std::size_t windows_dropped() const { return windows_dropped_; }
  const std::vector<lane>& lanes() const { return lanes_; }

 private:
  timeline_bucket level_bucket() const {
    return timeline_bucket{last_gate_, last_gate_, last_portal_, last_portal_, last_waiting_, last_waiting_, false};
  }
  void widen() {
    std::vector<timeline_bucket> merged((buckets_.size() + 1) / 2);
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      timeline_bucket& m = merged[i / 2];
      const timeline_bucket& b = buckets_[i];
      if (i % 2 == 0) {
        m = b;
        continue;
      }
      m.gate_max = std::max(m.gate_max, b.gate_max);
      m.gate_min = std::min(m.gate_min, b.gate_min);
      m.portal_max = std::max(m.portal_max, b.portal_max);
      m.portal_min = std::min(m.portal_min, b.portal_min);
      m.waiting_max = std::max(m.waiting_max, b.waiting_max);
      m.waiting_min = std::min(m.waiting_min, b.waiting_min);
      m.touched = m.touched || b.touched;
    }
    buckets_ = std::move(merged);
    width_ns_ *= 2;
    touched_begin_ns_ = touched_end_ns_ = 0;
  }

  vtime_ns width_ns_ = sim::ms;
  std::vector<timeline_bucket> buckets_;
  std::int64_t last_gate_ = 0, last_portal_ = 0, last_waiting_ = 0;
  // The bucket the last sample fell in (empty at first).
  vtime_ns touched_begin_ns_ = 0, touched_end_ns_ = 0;
  std::size_t touched_index_ = 0;
  std::vector<fault_window> windows_;
  std::size_t windows_dropped_ = 0;
  std::vector<lane> lanes_;
};

}  // namespace admit::world
