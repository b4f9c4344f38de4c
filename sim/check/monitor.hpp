// monitor: the checking part every world is built with.
//
// A world reports what happens in it (a gate transition, a script, a
// connection at the portal) to the monitors of its own parts; those judge it
// through one `monitor`, which holds what is common to every world:
//  * the world's invariants, in the world's fixed order (the report's key
//    order), each enabled or not by checks.invariants, with how often it was
//    checked and its first violation;
//  * the run's coverage probes (gate/probe.hpp: the sites count into the scope it installs);
//  * the bounded trace (trace_ring), whose entry type is the world's own,
//    and the stream that gets every entry when one is asked for;
//  * what happens at a violation. A run keeps going to its end, and each
//    invariant counts its violation windows, their time and its worst moment
//    (sim/check/results.hpp); with checks.stop_at_first the first violation
//    stops the run (the scheduler stops), which explore's search uses where
//    only the verdict matters. Either way the trace freezes at the first
//    violation, on what led to it.
// A level invariant (a quantity against its bound) must be told of every
// change of its quantity, down as well as up (`level`), so that its windows
// close; an event invariant is told of each step it judges (`check`).
// Once the world tears down (destroying the handlers a run left pending),
// nothing is checked, counted or traced any more.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/probe.hpp"
#include "sim/check/invariants.hpp"
#include "sim/check/results.hpp"
#include "sim/check/trace_ring.hpp"
#include "sim/kernel/scheduler.hpp"

namespace admit::check {

// Whether `names` are exactly the rows of the invariant table that apply to
// `world`, each once: a world asserts this of its list at compile time.
constexpr bool are_world_rows(std::span<const char* const> names, unsigned world) {
  std::size_t rows = 0;
  for (const auto& row : invariant_table) rows += (row.worlds & world) != 0;
  if (rows != names.size()) return false;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!applies(names[i], world)) return false;
    for (std::size_t j = 0; j < i; ++j)
      if (std::string_view(names[i]) == names[j]) return false;
  }
  return true;
}

template <class TraceEntry>
class monitor {
 public:
  // `invariants` in the world's order; `enabled`: the scenario's checks.invariants (empty: every
  // invariant of the world); `probe_world`: the probes of gate/probe.hpp's table the world reports
  // (probe::in_fifo, probe::in_lease). The monitor installs the run's probe::scope on this thread
  // from its construction until tear_down.
  monitor(sim::scheduler& sched, std::span<const char* const> invariants, const std::vector<std::string>& enabled,
          std::uint8_t probe_world, std::size_t trace_capacity, bool stop_at_first = false)
      : sched_(sched), probe_world_(probe_world), trace_(trace_capacity), stop_at_first_(stop_at_first) {
    ADMIT_ASSERT(invariants.size() <= max_invariants, "a world's invariants fit the monitor's mask");
    results_.reserve(invariants.size());
    for (const char* name : invariants) {
      invariant_result r;
      r.name = name;
      r.enabled = enabled.empty() || std::find(enabled.begin(), enabled.end(), r.name) != enabled.end();
      r.level = is_level(name);
      if (r.enabled) checking_ |= std::uint64_t{1} << results_.size();
      results_.push_back(std::move(r));
    }
    levels_.resize(invariants.size());
    ADMIT_ASSERT(results_.size() == invariants.size() && levels_.size() == results_.size(),
                 "one result and one level state per invariant of the world");
    ADMIT_ASSERT(probe_world_ != 0, "a world reports some probes");
    ADMIT_ASSERT(results_.size() == max_invariants || checking_ >> results_.size() == 0,
                 "only the world's own invariants are checked");
  }

  // One check of the event invariant `which` (its index in the world's
  // order). `describe()` (a std::string or a check::finding) is called for
  // each failed check. One test of the mask on the hot path: it stands for
  // "an invariant of this world, enabled, and the run not torn down". A clear
  // bit, which an index outside the world's invariants always has, is judged
  // out of line.
  template <class Describe>
  void check(std::size_t which, bool ok, Describe&& describe) {
    if (which >= max_invariants || (checking_ >> which & 1) == 0) [[unlikely]] {
      not_checked(which);
      return;
    }
    invariant_result& inv = results_[which];
    ++inv.checked;
    if (ok) [[likely]] return;
    failed_step(inv, describe);
  }

  // The level invariant `which`'s quantity is now `value`, against `bound`:
  // above it a window opens (or its peak grows); at or below it the open
  // window closes. `describe()` is called when a window opens and when it
  // reaches a new peak. Peaks compare by how far the value is above its
  // bound, so a world whose quantity has several bounds (one per gate) gives
  // the one furthest above its own.
  template <class Describe>
  void level(std::size_t which, std::int64_t value, std::int64_t bound, Describe&& describe) {
    if (which >= max_invariants || (checking_ >> which & 1) == 0) [[unlikely]] {
      not_checked(which);
      return;
    }
    invariant_result& inv = results_[which];
    ++inv.checked;
    level_state& s = levels_[which];
    if (value <= bound) [[likely]] {
      if (s.open) [[unlikely]] {
        // Checked here, not in close_window, which the noexcept teardown calls too.
        ADMIT_ASSERT(s.start_ns <= sched_.now_ns(), "a window closes at or after it opened (virtual time never goes back)");
        close_window(inv, s, false);
      }
      return;
    }
    if (s.open && value - bound <= s.peak_excess) return;
    above(inv, s, value, bound, describe);
  }

  bool enabled(std::size_t which) const { return results_[which].enabled; }

  // The slot for the next trace entry, or nullptr (none kept, frozen, or
  // torn down: then the entry is not counted either).
  TraceEntry* trace() { return torn_down_ ? nullptr : trace_.next(); }
  const trace_ring<TraceEntry>& trace_entries() const noexcept { return trace_; }
  // Every entry of the run also goes to `s` (trace_ring::stream_to); the
  // last one at teardown.
  void stream_trace(trace_stream<TraceEntry> s) { trace_.stream_to(s); }

  // Whether a violation stopped the run (checks.stop_at_first).
  bool stopped() const noexcept { return stopped_; }
  bool torn_down() const noexcept { return torn_down_; }
  // The run is over: a window still open ends here (open_at_end), the last
  // trace entry goes to the stream, and nothing is checked, counted or
  // traced any more.
  void tear_down() noexcept {
    trace_.flush();
    if (!torn_down_)
      for (std::size_t i = 0; i < levels_.size(); ++i)
        if (levels_[i].open) close_window(results_[i], levels_[i], true);
    torn_down_ = true;
    checking_ = 0;
    probes_.freeze();  // what the teardown does is no path the run took
  }

  // The results, for the run's record: the invariants and the probes.
  std::vector<invariant_result> take_invariants() { return std::move(results_); }
  probe_counts probes() const {
    probe_counts out;
    for (const probe::row& r : probe::table)
      if ((r.worlds & probe_world_) != 0)
        out.emplace_back(std::string(r.name), probes_.get().n[static_cast<std::size_t>(r.s)]);
    return out;
  }

 private:
  struct level_state {
    bool open = false;
    std::int64_t peak_excess = 0;  // the open window's highest value - bound
    sim::vtime_ns start_ns = 0;
    std::size_t kept = 0;               // its index in window_list, or max_windows_kept when not kept
    std::vector<std::string> seen;      // the causes it has counted (by their sentence)
  };

  static bool is_level(std::string_view name) {
    for (const auto& row : invariant_table)
      if (name == row.name) return row.level;
    return false;
  }

  template <class Describe>
  static finding found(Describe& describe) {
    if constexpr (std::same_as<std::decay_t<decltype(describe())>, finding>) return describe();
    else return finding{describe(), {}};
  }

  // Out of line and cold: the text of a violation is made only when one
  // happens, and inlined it would weigh on every check of the hot path.
  template <class Describe>
  [[gnu::noinline, gnu::cold]] void failed_step(invariant_result& inv, Describe& describe) {
    ADMIT_ASSERT(!torn_down_ && inv.enabled && inv.checked > 0, "a failed step of an enabled invariant, counted, in a live run");
    finding f = found(describe);
    const sim::vtime_ns now = sched_.now_ns();
    ++inv.windows;
    if (inv.window_list.size() < max_windows_kept) {
      violation_window w;
      w.start_ns = w.end_ns = w.peak_ns = now;
      w.detail = f.detail;
      keep_causes(w, f.causes);
      inv.window_list.push_back(std::move(w));
    }
    for (const cause& c : f.causes) count_cause(inv, c);
    first(inv, std::move(f.detail));
    ADMIT_ASSERT(!inv.holds && inv.first && inv.windows >= inv.window_list.size(),
                 "a failed step is a violation: the invariant no longer holds, its first is kept, every kept window counted");
    ADMIT_ASSERT(inv.window_list.size() <= max_windows_kept, "at most max_windows_kept windows are kept");
  }

  template <class Describe>
  [[gnu::noinline, gnu::cold]] void above(invariant_result& inv, level_state& s, std::int64_t value,
                                          std::int64_t bound, Describe& describe) {
    ADMIT_ASSERT(!torn_down_ && inv.enabled && inv.level, "a level invariant, enabled, in a live run");
    ADMIT_ASSERT(value > bound, "above() is called only above the bound");
    finding f = found(describe);
    const sim::vtime_ns now = sched_.now_ns();
    if (!s.open) {
      s.open = true;
      s.start_ns = now;
      s.seen.clear();
      ++inv.windows;
      s.kept = max_windows_kept;
      if (inv.window_list.size() < max_windows_kept) {
        s.kept = inv.window_list.size();
        violation_window w;
        w.start_ns = now;
        w.detail = f.detail;
        inv.window_list.push_back(std::move(w));
      }
    }
    s.peak_excess = value - bound;
    if (s.kept < inv.window_list.size()) {
      violation_window& w = inv.window_list[s.kept];
      w.peak = value;
      w.bound = bound;
      w.peak_ns = now;
    }
    for (const cause& c : f.causes) {
      if (std::find(s.seen.begin(), s.seen.end(), c.detail) != s.seen.end()) continue;
      s.seen.push_back(c.detail);
      count_cause(inv, c);
      if (s.kept < inv.window_list.size() && inv.window_list[s.kept].causes.size() < max_causes_kept)
        inv.window_list[s.kept].causes.push_back(c);
    }
    if (!inv.worst || value - bound > inv.worst->value - inv.worst->bound) inv.worst = worst_moment{value, bound, now, f.detail};
    first(inv, std::move(f.detail));
    ADMIT_ASSERT(s.open && s.peak_excess == value - bound && s.start_ns <= now, "the window is open at this peak");
    ADMIT_ASSERT(inv.worst && inv.worst->value - inv.worst->bound >= s.peak_excess,
                 "the worst moment is at least as far above its bound as this window's peak");
    ADMIT_ASSERT(!inv.holds && inv.first && inv.windows >= inv.window_list.size() &&
                     inv.window_list.size() <= max_windows_kept,
                 "a violation is kept: first, counted windows, at most max_windows_kept of them");
  }

  void close_window(invariant_result& inv, level_state& s, bool at_end) noexcept {
    const sim::vtime_ns now = sched_.now_ns();
    s.open = false;
    inv.time_in_violation_ns += now - s.start_ns;
    if (s.kept < inv.window_list.size()) {
      inv.window_list[s.kept].end_ns = now;
      inv.window_list[s.kept].open_at_end = at_end;
    }
  }

  static void keep_causes(violation_window& w, const std::vector<cause>& causes) {
    for (const cause& c : causes) {
      if (w.causes.size() == max_causes_kept) break;
      w.causes.push_back(c);
    }
  }

  // One more violation of `inv` with cause `c`: the per-cause counts stay by count, then kind.
  static void count_cause(invariant_result& inv, const cause& c) {
    auto it = std::find_if(inv.causes.begin(), inv.causes.end(), [&](const cause_count& k) { return k.kind == c.kind; });
    if (it == inv.causes.end()) {
      inv.causes.push_back(cause_count{c.kind, 0, c.detail});
      it = inv.causes.end() - 1;
    }
    ++it->count;
    const auto by_count = [](const cause_count& a, const cause_count& b) {
      return a.count != b.count ? a.count > b.count : a.kind < b.kind;
    };
    std::stable_sort(inv.causes.begin(), inv.causes.end(), by_count);
    ADMIT_ASSERT(std::count_if(inv.causes.begin(), inv.causes.end(),
                               [&](const cause_count& k) { return k.kind == c.kind; }) == 1,
                 "one count per cause kind");
  }

  // The first violation of any invariant freezes the trace (and, with
  // stop_at_first, stops the run); each invariant keeps its own first.
  void first(invariant_result& inv, std::string detail) {
    if (!inv.holds) {
      ADMIT_ASSERT(inv.first && any_violation_, "an invariant that broke kept its first violation");
      return;
    }
    inv.holds = false;
    inv.first = violation{sched_.now_ns(), std::move(detail), trace_.total()};
    on_violation();
    ADMIT_ASSERT(any_violation_ && (!stop_at_first_ || stopped_), "the first violation freezes the trace (and stops a stop-at-first run)");
  }

  // A check skipped: its invariant is disabled, or the run is torn down; but
  // never an index outside the world's invariants.
  [[gnu::noinline, gnu::cold]] void not_checked(std::size_t which) const {
    ADMIT_ASSERT(which < results_.size(), "an invariant of this world");
  }

  void on_violation() {
    if (!any_violation_) {
      any_violation_ = true;
      trace_.freeze();
    }
    if (!stop_at_first_ || stopped_) return;
    stopped_ = true;
    sched_.stop();
  }

  // Invariants a world may have: one bit each in checking_.
  static constexpr std::size_t max_invariants = 64;
  static_assert(invariant_count <= max_invariants, "every row of the invariant table fits the mask");

  sim::scheduler& sched_;
  std::vector<invariant_result> results_;
  std::uint64_t checking_ = 0;  // bit i: invariant i is enabled and the run is not torn down
  std::uint8_t probe_world_;
  probe::scope probes_;
  std::vector<level_state> levels_;  // one per invariant (used by the level ones)
  trace_ring<TraceEntry> trace_;
  bool stop_at_first_;
  bool any_violation_ = false;
  bool stopped_ = false;
  bool torn_down_ = false;
};

}  // namespace admit::check
