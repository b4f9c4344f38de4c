// monitor: the checking part every world is built with.
//
// A world reports what happens in it (a gate transition, a script, a
// connection at the portal) to the monitors of its own parts; those judge it
// through one `monitor`, which holds what is common to every world:
//  * the world's invariants, in the world's fixed order (the report's key
//    order), each enabled or not by checks.invariants, with how often it was
//    checked and its first violation;
//  * the coverage probes, in the world's fixed order;
//  * the bounded trace (trace_ring), whose entry type is the world's own;
//  * what happens at a violation. Today the first violation stops the run
//    (the scheduler stops, the trace freezes on what led to it); this is the
//    one place a keep-going mode changes.
// Once the world tears down (destroying the handlers a run left pending),
// nothing is checked, counted or traced any more.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gate/admit_assert.hpp"
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
  // `invariants` and `probes` in the world's order; `enabled`: the
  // scenario's checks.invariants (empty: every invariant of the world).
  monitor(sim::scheduler& sched, std::span<const char* const> invariants, const std::vector<std::string>& enabled,
          std::span<const char* const> probes, std::size_t trace_capacity)
      : sched_(sched), trace_(trace_capacity) {
    ADMIT_ASSERT(invariants.size() <= max_invariants, "a world's invariants fit the monitor's mask");
    results_.reserve(invariants.size());
    for (const char* name : invariants) {
      invariant_result r;
      r.name = name;
      r.enabled = enabled.empty() || std::find(enabled.begin(), enabled.end(), r.name) != enabled.end();
      if (r.enabled) checking_ |= std::uint64_t{1} << results_.size();
      results_.push_back(std::move(r));
    }
    probe_names_ = probes;
    probes_.assign(probes.size(), 0);
  }

  // One check of invariant `which` (its index in the world's order).
  // `describe()` is called only for the first violation.
  // One test of the mask on the hot path: it stands for "an invariant of
  // this world, enabled, and the run not torn down". A clear bit, which an
  // index outside the world's invariants always has, is judged out of line.
  template <class Describe>
  void check(std::size_t which, bool ok, Describe&& describe) {
    if (which >= max_invariants || (checking_ >> which & 1) == 0) [[unlikely]] {
      not_checked(which);
      return;
    }
    invariant_result& inv = results_[which];
    ++inv.checked;
    if (ok || !inv.holds) [[likely]] return;
    first_violation(inv, describe);
  }

  bool enabled(std::size_t which) const { return results_[which].enabled; }

  void hit(std::size_t probe) {
    if (torn_down_) return;
    ++probes_[probe];
  }

  // The slot for the next trace entry, or nullptr (none kept, frozen, or
  // torn down: then the entry is not counted either).
  TraceEntry* trace() { return torn_down_ ? nullptr : trace_.next(); }
  const trace_ring<TraceEntry>& trace_entries() const noexcept { return trace_; }

  // Whether a violation stopped the run.
  bool stopped() const noexcept { return stopped_; }
  bool torn_down() const noexcept { return torn_down_; }
  void tear_down() noexcept {
    torn_down_ = true;
    checking_ = 0;
  }

  // The results, for the run's record: the invariants and the probes.
  std::vector<invariant_result> take_invariants() { return std::move(results_); }
  probe_counts probes() const {
    probe_counts out;
    out.reserve(probes_.size());
    for (std::size_t i = 0; i < probes_.size(); ++i) out.emplace_back(probe_names_[i], probes_[i]);
    return out;
  }

 private:
  // Out of line and cold: the text of a violation is made once per run, and
  // inlined it would weigh on every check of the hot path.
  template <class Describe>
  [[gnu::noinline, gnu::cold]] void first_violation(invariant_result& inv, Describe& describe) {
    inv.holds = false;
    inv.first = violation{sched_.now_ns(), describe(), trace_.total()};
    on_violation();
  }

  // A check skipped: its invariant is disabled, or the run is torn down; but
  // never an index outside the world's invariants.
  [[gnu::noinline, gnu::cold]] void not_checked(std::size_t which) const {
    ADMIT_ASSERT(which < results_.size(), "an invariant of this world");
  }

  void on_violation() {
    if (stopped_) return;
    stopped_ = true;
    trace_.freeze();
    sched_.stop();
  }

  // Invariants a world may have: one bit each in checking_.
  static constexpr std::size_t max_invariants = 64;
  static_assert(invariant_count <= max_invariants, "every row of the invariant table fits the mask");

  sim::scheduler& sched_;
  std::vector<invariant_result> results_;
  std::uint64_t checking_ = 0;  // bit i: invariant i is enabled and the run is not torn down
  std::span<const char* const> probe_names_;
  std::vector<std::uint64_t> probes_;
  trace_ring<TraceEntry> trace_;
  bool stopped_ = false;
  bool torn_down_ = false;
};

}  // namespace admit::check
