// results: what the monitors of one run found, as plain data.
//
// A run's record (sim/world/run_record.hpp) holds these; the verdict logic
// (verdict.hpp) and the reports read them.
//
// A run keeps going past its first violation (unless checks.stop_at_first),
// so each invariant says how bad it got, not only that it broke:
//  * a *level* invariant bounds a quantity (leases in use, waiters, open
//    connections): it is in violation from the moment the quantity goes above
//    its bound until it comes back, one *window*; its worst moment is the
//    highest value reached (the first time it was reached);
//  * an *event* invariant judges single steps (a promotion out of order, a
//    token granted twice): each failed step is a window of no duration.
// The counts and the time are exact; the list of windows is bounded
// (max_windows_kept, the first ones), and so is each window's list of causes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/kernel/vtime.hpp"

namespace admit::check {

struct violation {
  sim::vtime_ns at_ns = 0;
  std::string detail;
  std::uint64_t trace_index = 0;  // how many trace entries preceded it in the run
};

// Why a violation happened, from what the world knows: `kind` is a row of
// the cause table (sim/check/causes.hpp), `detail` one sentence with the
// figures ("reaped by worker 0, whose clock is 20s ahead: ...").
struct cause {
  std::string kind;
  std::string detail;
};

// What a world tells the monitor of one violation: what broke, and why.
struct finding {
  std::string detail;
  std::vector<cause> causes;
};

// The windows a report lists per invariant (the totals count them all).
inline constexpr std::size_t max_windows_kept = 32;
// The causes kept per window (the per-cause counts count them all).
inline constexpr std::size_t max_causes_kept = 16;

struct violation_window {
  sim::vtime_ns start_ns = 0;
  sim::vtime_ns end_ns = 0;     // start_ns for an event; the run's end when still open then
  bool open_at_end = false;     // still in violation when the run ended
  std::int64_t peak = 0;        // level: the highest value in the window (furthest above its bound); event: 0
  std::int64_t bound = 0;       // level: the bound the peak was above
  sim::vtime_ns peak_ns = 0;    // when the peak was first reached
  std::string detail;           // what opened it
  std::vector<cause> causes;    // why (bounded: max_causes_kept)
};

// The worst moment of a level invariant: its highest value against the bound.
struct worst_moment {
  std::int64_t value = 0;
  std::int64_t bound = 0;
  sim::vtime_ns at_ns = 0;
  std::string detail;
};

// One kind of cause of an invariant's violations: how many windows (or, for
// a level window explained by several lost permits, how many of those) gave
// it, and the first sentence seen.
struct cause_count {
  std::string kind;
  std::uint64_t count = 0;
  std::string example;
};

struct invariant_result {
  std::string name;
  bool enabled = true;
  bool holds = true;
  std::uint64_t checked = 0;
  std::optional<violation> first;
  bool level = false;  // a bounded quantity (windows with a duration, a worst moment); else events
  std::uint64_t windows = 0;                  // exact
  sim::vtime_ns time_in_violation_ns = 0;     // exact (level invariants)
  std::optional<worst_moment> worst;          // level invariants that broke
  std::vector<violation_window> window_list;  // the first max_windows_kept
  std::vector<cause_count> causes;            // by count (most first), then kind
};

// Coverage probes: rare paths and how often the run took them, in a fixed
// order per world; a probe at 0 is a path the scenario never exercised.
using probe_counts = std::vector<std::pair<std::string, std::uint64_t>>;

}  // namespace admit::check
