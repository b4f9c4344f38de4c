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
//
// Lanes around moments. A run records the lanes of its first max_lanes
// requests. Asked before it starts (keep_lanes_in), it also keeps the lanes
// of later requests whose life meets one of a few time spans: the HTML page
// zooms onto a run's worst moment and first violation and shows the requests
// active then, which in a long run are not among the first. The page learns
// the spans from a first run and runs the seed again (the run is the same
// run: keeping lanes changes no event). A request's first lane_for is its
// arrival, and requests arrive in number order, so the kept lanes stay
// sorted by number; a lane whose life is over and meets no span is dropped
// when the store fills, and a request arriving after every span is not kept.
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

  // The levels reached `gate`, `portal` and `waiting` in this bucket.
  [[gnu::always_inline]] void include(std::int64_t gate, std::int64_t portal, std::int64_t waiting) {
    gate_max = std::max(gate_max, gate);
    gate_min = std::min(gate_min, gate);
    portal_max = std::max(portal_max, portal);
    portal_min = std::min(portal_min, portal);
    waiting_max = std::max(waiting_max, waiting);
    waiting_min = std::min(waiting_min, waiting);
  }
};

struct fault_window {
  std::string kind;
  std::string target;
  vtime_ns start_ns = 0;
  vtime_ns end_ns = 0;  // == start_ns for an instant (a clock step)
};

// A stretch of virtual time, both ends included.
struct time_span {
  vtime_ns from_ns = 0;
  vtime_ns to_ns = 0;
  friend bool operator==(const time_span&, const time_span&) = default;
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

  // Still going: not ended, or its work still open at the portal (which can outlast the request's end).
  bool open() const noexcept { return ended_ns < 0 || (work_start_ns >= 0 && work_end_ns < 0); }
  // The last instant of a lane that is over.
  vtime_ns last_ns() const noexcept { return std::max({arrived_ns, ended_ns, work_end_ns, gave_up_ns}); }
  // Whether its life meets `s` (an open lane lasts to the end of the run).
  bool meets(const time_span& s) const noexcept {
    return arrived_ns >= 0 && arrived_ns <= s.to_ns && (open() || last_ns() >= s.from_ns);
  }
};

class timeline {
 public:
  static constexpr std::size_t max_buckets = 1024;
  static constexpr std::size_t max_lanes = 400;
  static constexpr std::size_t max_windows = 1000;
  static constexpr std::size_t max_lane_spans = 8;
  // The later lanes a run holds at once while it keeps lanes around spans; a lane over and outside every
  // span makes room when the store fills.
  static constexpr std::size_t max_span_lanes = 4096;

  // Samples the three series at `t` (call after every change).
  // Inline for the common case, a sample in the bucket the last one touched (several a request); a
  // sample in another bucket goes out of line.
  [[gnu::always_inline]] void sample(vtime_ns t, std::int64_t gate, std::int64_t portal, std::int64_t waiting) {
    if (t < touched_end_ns_ && t >= touched_begin_ns_ && t >= 0) [[likely]] {
      if (gate == last_gate_ && portal == last_portal_ && waiting == last_waiting_) return;
      timeline_bucket& b = buckets_[touched_index_];
      if (b.touched) [[likely]] {
        b.include(gate, portal, waiting);
        last_gate_ = gate;
        last_portal_ = portal;
        last_waiting_ = waiting;
        return;
      }
    }
    sample_slow(t, gate, portal, waiting);
  }

  // Any sample (sample()'s fast path is this with the bucket known and touched).
  [[gnu::noinline]] void sample_slow(vtime_ns t, std::int64_t gate, std::int64_t portal, std::int64_t waiting) {
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
      b.include(last_gate_, last_portal_, last_waiting_);  // the level before the first sample here counts too
    } else {
      b.include(gate, portal, waiting);
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

  // Before the run: also keep the lanes of later requests whose life meets one of `spans` (at most
  // max_lane_spans of them).
  void keep_lanes_in(std::vector<time_span> spans) {
    if (spans.size() > max_lane_spans) spans.resize(max_lane_spans);
    lane_spans_ = std::move(spans);
    spans_end_ns_ = 0;
    for (const time_span& s : lane_spans_) spans_end_ns_ = std::max(spans_end_ns_, s.to_ns);
  }

  // A lane for request `number` (kept for the first max_lanes requests, and
  // around the spans of keep_lanes_in), or nullptr.
  // Inline for its common answer (a later request, no spans: none); the rest out of line.
  [[gnu::always_inline]] lane* lane_for(std::uint64_t number) {
    if (number > max_lanes && lane_spans_.empty()) [[likely]]
      return nullptr;
    return kept_lane_for(number);
  }

  vtime_ns bucket_width_ns() const { return width_ns_; }
  const std::vector<timeline_bucket>& buckets() const { return buckets_; }
  const std::vector<fault_window>& windows() const { return windows_; }
  std::size_t windows_dropped() const { return windows_dropped_; }
  const std::vector<lane>& lanes() const { return lanes_; }
  // The spans asked for, and the later lanes kept around them (by number; some may meet no span).
  const std::vector<time_span>& lane_spans() const { return lane_spans_; }
  const std::vector<lane>& span_lanes() const { return span_lanes_; }
  // Whether a lane that met a span was not kept (the store was full of open lanes).
  bool span_lanes_dropped() const { return span_lanes_dropped_; }

 private:
  [[gnu::noinline]] lane* kept_lane_for(std::uint64_t number) {
    if (number == 0) return nullptr;
    if (number > max_lanes) return span_lane_for(number);
    if (lanes_.size() < number) lanes_.resize(number);
    lane& l = lanes_[number - 1];
    l.number = number;
    return &l;
  }

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

  [[gnu::noinline]] lane* span_lane_for(std::uint64_t number) {
    if (!span_lanes_.empty() && number <= span_lanes_.back().number) {
      const auto it = std::lower_bound(span_lanes_.begin(), span_lanes_.end(), number,
                                       [](const lane& l, std::uint64_t n) { return l.number < n; });
      return it != span_lanes_.end() && it->number == number ? &*it : nullptr;
    }
    // A new request: its arrival. Once one has arrived after every span, no later one can meet one.
    if (spans_closed_) return nullptr;
    if (!span_lanes_.empty() && span_lanes_.back().arrived_ns > spans_end_ns_) {
      span_lanes_.pop_back();
      spans_closed_ = true;
      return nullptr;
    }
    if (span_lanes_.size() == max_span_lanes) {
      std::erase_if(span_lanes_, [&](const lane& l) {
        if (l.open()) return false;
        return std::none_of(lane_spans_.begin(), lane_spans_.end(), [&](const time_span& s) { return l.meets(s); });
      });
      if (span_lanes_.size() == max_span_lanes) {
        span_lanes_dropped_ = true;
        return nullptr;
      }
    }
    lane& l = span_lanes_.emplace_back();
    l.number = number;
    return &l;
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
  std::vector<time_span> lane_spans_;
  vtime_ns spans_end_ns_ = 0;
  std::vector<lane> span_lanes_;
  bool spans_closed_ = false;
  bool span_lanes_dropped_ = false;
};

}  // namespace admit::world
