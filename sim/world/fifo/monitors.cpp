#include "sim/world/fifo/monitors.hpp"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "sim/scenario/duration.hpp"

namespace admit::world::fifo_world {

fifo_monitors::fifo_monitors(run_context& ctx, const gate_set& gates)
    : mon_(ctx.sched, invariant_names, ctx.sc.checks.invariants, probe_names,
           static_cast<std::size_t>(ctx.sc.checks.trace_capacity), ctx.sc.checks.stop_at_first),
      ctx_(ctx),
      gates_(gates) {}

void fifo_monitors::check_idle(vtime_ns lh_ns, std::int64_t outstanding) {
  std::string why;
  if (outstanding != 0) why = std::to_string(outstanding) + " requests that arrived had not ended";
  for (const auto& g : gates_) {
    const auto& core = g->gate().core();
    if (why.empty() && (core.active() != 0 || core.waiting() != 0))
      why = g->name + " was not idle: active " + std::to_string(core.active()) + ", waiting " +
            std::to_string(core.waiting());
  }
  mon_.check(inv_liveness, why.empty(), [&] {
    return "at checks.liveness_horizon (" + scenario::format_duration(lh_ns) + ") " + why;
  });
}

void fifo_monitors::check_end(bool arrivals_done, std::int64_t outstanding) {
  std::string why;
  if (!arrivals_done || outstanding != 0) why = std::to_string(outstanding) + " requests never ended";
  const bool all_ended = why.empty();
  for (const auto& g : gates_) {
    const auto& core = g->gate().core();
    // Every request has answered, so no handler holds a lease: whatever the
    // gate still counts as granted and unreleased has leaked.
    if (all_ended)
      mon_.check(inv_released_once, g->granted == g->released, [&] {
        return g->name + ": " + std::to_string(g->granted) + " leases granted but " + std::to_string(g->released) +
               " released after every request ended";
      });
    if (why.empty() && (core.active() != 0 || core.waiting() != 0))
      why = g->name + " is not idle at the end: active " + std::to_string(core.active()) + ", waiting " +
            std::to_string(core.waiting());
  }
  mon_.check(inv_liveness, why.empty(), [&] { return why; });
}

std::string_view fifo_monitors::source_of(const live_entry& e) {
  if (e.source != nullptr) return e.source->name;
  // By their text, not their address: a literal named in two files need not be one object (a build
  // without optimisation merges no constants), and this runs only for the entries kept or streamed.
  const bool fault = std::any_of(std::begin(fault_texts), std::end(fault_texts),
                                 [&e](const char* t) { return std::string_view(t) == e.what; });
  return fault ? "fault" : "request";
}

void fifo_monitors::record_results() {
  ADMIT_ASSERT(mon_.torn_down(), "results are taken once the run is over");
  ctx_.rec.trace.clear();
  mon_.trace_entries().for_each([&](const live_entry& e) {
    ctx_.rec.trace.push_back(trace_entry{e.at_ns, std::string(source_of(e)), e.what, e.active, e.waiting, e.ref});
  });
  ctx_.rec.trace_dropped = mon_.trace_entries().dropped();
  ctx_.rec.invariants = mon_.take_invariants();
  ctx_.rec.probes = mon_.probes();
}

}  // namespace admit::world::fifo_world
