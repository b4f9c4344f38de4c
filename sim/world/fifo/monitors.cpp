#include "sim/world/fifo/monitors.hpp"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "sim/scenario/duration.hpp"
#include "sim/world/cause_text.hpp"

namespace admit::world::fifo_world {

fifo_monitors::fifo_monitors(run_context& ctx, const gate_set& gates, const request_pool& pool)
    : mon_(ctx.sched, invariant_names, ctx.sc.checks.invariants, probe::in_fifo,
           static_cast<std::size_t>(ctx.sc.checks.trace_capacity), ctx.sc.checks.stop_at_first),
      ctx_(ctx),
      gates_(gates),
      pool_(pool) {}

namespace {

using check::cause;
using check::cause_kind;

// What a gate's mutation does, as a cause of `what` (the real gate has none:
// it asserts the invariants a mutation breaks).
cause mutation_cause(const std::string& gate, fifo::mutation mut, const std::string& what) {
  switch (mut) {
    case fifo::mutation::none:
    case fifo::mutation::corrupt_on_release:
      break;
    case fifo::mutation::leak_handover_on_cancel:
      return {cause_kind("mutant_leak_handover_on_cancel"),
              what + ": " + gate + " never releases a lease handed to a waiter cancelled before it resumed (mutation leak_handover_on_cancel)"};
    case fifo::mutation::admit_off_by_one:
      return {cause_kind("mutant_admit_off_by_one"),
              what + ": " + gate + " admits while active <= max_active (mutation admit_off_by_one)"};
    case fifo::mutation::newcomers_jump_queue:
      return {cause_kind("mutant_newcomers_jump_queue"),
              what + ": " + gate + "'s release leaves the slot free, and a newcomer takes it past older waiters (mutation newcomers_jump_queue)"};
    case fifo::mutation::double_release_on_timeout:
      return {cause_kind("mutant_double_release_on_timeout"),
              what + ": " + gate + " releases twice a lease handed to a waiter whose deadline passed before it resumed (mutation double_release_on_timeout)"};
  }
  return {cause_kind("unexplained"), what + " (the gate runs no mutation, and its core keeps this invariant)"};
}

// Why gate `g` broke one of its own invariants: the team's core it runs, or
// its mutation.
cause gate_cause(const gate_slot& g, const std::string& what) {
  if (const recorded_core* user = g.gate().core().user())
    return {cause_kind("own_core"),
            what + ": " + g.name + " runs the gate core " + user->name() + " (a core of its user's, not admitsim's)"};
  return mutation_cause(g.name, g.gate().core().cfg().mut, what);
}

}  // namespace

check::finding fifo_monitors::mutant(const gate_slot& g, std::string what) const {
  check::finding f;
  f.causes.push_back(gate_cause(g, what));
  f.detail = std::move(what);
  return f;
}

check::finding fifo_monitors::any_mutant(std::string what) const {
  for (const auto& g : gates_)
    if (g->gate().core().cfg().mut != fifo::mutation::none || g->gate().core().user() != nullptr)
      return mutant(*g, std::move(what));
  check::finding f;
  f.causes.push_back(cause{cause_kind("unexplained"), what + " (no gate runs a mutation)"});
  f.detail = std::move(what);
  return f;
}

std::vector<cause> fifo_monitors::portal_causes(const request_state* beginning) const {
  std::vector<cause> out;
  auto add = [&](cause c) {
    for (const cause& o : out)
      if (o.detail == c.detail) return;
    out.push_back(std::move(c));
  };
  // The work at the portal in request order, and per gate of the living
  // process the leases its work there holds.
  std::vector<const request_state*> at_portal;
  pool_.for_each_live([&](const request_state& r) {
    if (r.handler.at_portal) at_portal.push_back(&r);
  });
  std::sort(at_portal.begin(), at_portal.end(),
            [](const request_state* a, const request_state* b) { return a->number < b->number; });
  std::vector<std::int64_t> held(gates_.size(), 0);
  const std::uint64_t now_gen = ctx_.proc.generation();
  for (const request_state* r : at_portal) {
    const std::string request = "request " + r->a.id();
    if (r->handler.gen != now_gen) {
      const vtime_ns crashed = r->handler.gen < crashes_.size() ? crashes_[r->handler.gen] : -1;
      add({cause_kind("crashed_process_work"),
           request + "'s work, started before the process crashed at " + span_text(crashed) +
               ", still ran at the portal while the restarted process's gate admitted anew"});
      continue;
    }
    const std::size_t gi = r->a.gate_index;
    if (r != beginning && !r->lease) {
      if (ctx_.sc.gates[gi].world_mut == scenario::world_mutation::release_before_work_ends)
        add({cause_kind("mutant_release_before_work_ends"),
             request + "'s lease was freed as its work began (mutation release_before_work_ends), and the work still ran"});
      else
        add({cause_kind("unexplained"), request + " works at the portal holding no lease"});
      continue;
    }
    ++held[gi];
  }
  std::int64_t counted = 0, caps = 0;
  bool over_own = false;
  for (std::size_t gi = 0; gi < gates_.size(); ++gi) {
    const gate_slot& g = *gates_.begin()[gi];
    const sim_core& core = g.gate().core();
    caps += core.cfg().max_active;
    if (held[gi] > core.active()) {
      // Its work holds more leases than it counts: it counted some out while their work runs.
      add(gate_cause(g, g.name + " counts " + count_text(core.active(), "lease", "leases") + " active while " +
                             std::to_string(held[gi]) + " of its requests hold one at the portal"));
    }
    counted += held[gi];
    if (held[gi] > core.cfg().max_active) {
      over_own = true;
      add(gate_cause(g, g.name + "'s requests hold " + count_text(held[gi], "lease", "leases") +
                             " at the portal, above its max_active " + std::to_string(core.cfg().max_active)));
    }
  }
  if (counted > ctx_.service.cap() && caps > ctx_.service.cap()) {
    std::string each;
    for (const auto& g : gates_) each += (each.empty() ? "" : ", ") + g->name + " " + std::to_string(g->gate().core().cfg().max_active);
    add({cause_kind("gate_caps_above_portal"), "the gates' caps add up to " + std::to_string(caps) + " (" + each +
                                                   "), above the portal's cap " + std::to_string(ctx_.service.cap())});
  } else if (counted > ctx_.service.cap() && !over_own) {
    add({cause_kind("unexplained"), count_text(counted, "lease", "leases") + " counted by the gates at the portal, above its cap"});
  }
  if (out.empty()) add({cause_kind("unexplained"), "every request at the portal holds a lease its gate counts"});
  return out;
}

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
    return any_mutant("at checks.liveness_horizon (" + scenario::format_duration(lh_ns) + ") " + why);
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
        return mutant(*g, g->name + ": " + std::to_string(g->granted) + " leases granted but " +
                              std::to_string(g->released) + " released after every request ended");
      });
    if (why.empty() && (core.active() != 0 || core.waiting() != 0))
      why = g->name + " is not idle at the end: active " + std::to_string(core.active()) + ", waiting " +
            std::to_string(core.waiting());
  }
  mon_.check(inv_liveness, why.empty(), [&] { return any_mutant(why); });
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
