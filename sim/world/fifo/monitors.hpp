// fifo_monitors: what the FIFO world checks, built on check::monitor.
//
// The monitors see every gate transition (through each gate slot), every
// call into a gate, every start and end of work at the portal, and the end
// of the run (and checks.liveness_horizon). They check the FIFO world's
// invariants at each step, count its coverage probes, keep the bounded trace
// and the run's metrics and timeline samples; check::monitor stops the run at
// the first violation only with checks.stop_at_first. The checks:
//  * gate_inflight_le_cap: no gate has more leases active than its
//    max_active (a level: judged at every gate event, against the gate
//    furthest above its own cap);
//  * waiting_le_max: no queue holds more than its max_waiting (a level, likewise);
//  * portal_inflight_le_cap: the portal never sees more work than its cap
//    (a level: judged as work begins and ends);
//  * fifo_order: a promotion takes the ticket that waited longest, and no
//    newcomer is admitted while a ticket waits;
//  * lease_released_once: no release without a grant, none the core refused
//    as unbalanced, and once every request ended, as many releases as grants;
//  * liveness: at the end (and at checks.liveness_horizon) every request has
//    ended and every gate is idle.
//
// Each violation names its causes (check::cause_table), from what the world
// knows, made only when a violation is described (check::monitor's cold
// path). The portal: each request at work there whose lease no gate of the
// living process counts (work of a crashed lifetime, a lease freed as the
// work began, a lease counted out twice), and, when the leases the gates do
// count are more than the cap, the gates' caps above the portal's or a gate
// above its own. The gates' own invariants hold in the real core (it asserts
// them), so a gate that breaks one runs a mutation (docs/mutants.md), which
// the cause names; in a run of a team's own core (sim/world/own_gate.hpp)
// the cause names that core, and a breach of its contract counts against
// lease_released_once (a break of the FIFO rules the events do not show,
// against fifo_order).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/check/causes.hpp"
#include "sim/check/monitor.hpp"
#include "sim/check/trace_sink.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/fifo/gate_slot.hpp"
#include "sim/world/fifo/portal.hpp"
#include "sim/world/fifo/request.hpp"
#include "sim/world/fifo/request_pool.hpp"
#include "sim/world/fifo/run_context.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::fifo_world {

// One entry of the live trace: text is made only for the entries a report
// shows. `source` is a gate (nullptr: the request itself, the portal or a
// fault, as `what` says); `what` is a static string.
struct live_entry {
  vtime_ns at_ns;
  const gate_slot* source;
  const char* what;
  std::int64_t active;
  std::int64_t waiting;
  std::uint64_t ref;
};

class fifo_monitors {
 public:
  // The FIFO world's invariants in its report's key order.
  enum inv : std::size_t {
    inv_gate_inflight,
    inv_waiting,
    inv_portal_inflight,
    inv_fifo_order,
    inv_released_once,
    inv_liveness,
    inv_count,
  };
  static constexpr std::array<const char*, inv_count> invariant_names = {
      "gate_inflight_le_cap", "waiting_le_max",      "portal_inflight_le_cap",
      "fifo_order",           "lease_released_once", "liveness",
  };
  static_assert(check::are_world_rows(invariant_names, check::world_fifo),
                "the FIFO world reports every invariant row that applies to it, once");

  // Trace texts of the faults (static strings; record_results tells them by their text).
  static constexpr const char* fault_texts[] = {"crash worker:0", "restart worker:0", "stall worker:0",
                                                "partition portal", "client_timeout_burst"};

  fifo_monitors(run_context& ctx, const gate_set& gates, const request_pool& pool);

  // The process crashed now (its lifetime crashes_.size() ended).
  void on_crash() { crashes_.push_back(ctx_.sched.now_ns()); }

  void on_gate_event(gate_slot& g, const fifo::event& e);
  // After every call into a gate: a release the core refused as unbalanced
  // means some lease was counted out twice.
  void on_gate_change(gate_slot& g, const sim_core& core) {
    mon_.check(inv_released_once, core.totals().unbalanced_release == 0 && core.active() >= 0, [&] {
      return mutant(g, g.name + ": a holder released its lease after the gate had already counted it out (" +
                           std::to_string(core.totals().unbalanced_release) + " unbalanced release)");
    });
  }
  // A team's own core in `g` answered against its contract (recorded_core.hpp).
  void on_core_breach(gate_slot& g, breach_kind kind, std::string what) {
    if (mon_.torn_down()) return;
    mon_.check(kind == breach_kind::order ? inv_fifo_order : inv_released_once, false,
               [&] { return mutant(g, g.name + ": " + what); });
  }
  // The core in `g` failed outside its contract (a child process gone):
  // the run stops here and ends inconclusive (world.cpp, finish).
  void on_core_failure(gate_slot& g, const fifo::core_failure& f) {
    if (core_failure_) return;
    core_failure_ = fifo::core_failure{f.kind, g.name + ": " + f.detail};
    ctx_.sched.stop();
  }
  const std::optional<fifo::core_failure>& core_failure() const noexcept { return core_failure_; }
  // Work of `r` began or ended at the portal (its count already moved).
  void on_portal_begin(const request_state& r);
  void on_portal_end(const request_state& r) {
    trace(nullptr, "portal end", ctx_.service.in_flight(), 0, r.number);
    mon_.level(inv_portal_inflight, ctx_.service.in_flight(), ctx_.service.cap(), [&] {
      return check::finding{"portal: " + std::to_string(ctx_.service.in_flight()) +
                                " requests in flight, above the portal's cap " + std::to_string(ctx_.service.cap()),
                            portal_causes(nullptr)};
    });
    sample_series();
    if (lane* l = ctx_.rec.series.lane_for(r.number)) l->work_end_ns = ctx_.sched.now_ns();
  }
  // At checks.liveness_horizon `lh_ns`, and at the end (`arrivals_done`:
  // the source gave every arrival): every request ended, every gate is idle.
  [[gnu::noinline]] void check_idle(vtime_ns lh_ns, std::int64_t outstanding);
  [[gnu::noinline]] void check_end(bool arrivals_done, std::int64_t outstanding);

  // Inline, as is sample_series(): both run several times a request, and out of line their calls cost
  // more than their bodies.
  [[gnu::always_inline]] void trace(const gate_slot* source, const char* what, std::int64_t active,
                                    std::int64_t waiting, std::uint64_t ref) {
    if (live_entry* e = mon_.trace()) *e = live_entry{ctx_.sched.now_ns(), source, what, active, waiting, ref};
  }
  // Totals over every gate, sampled into the run's timeline.
  [[gnu::always_inline]] void sample_series() {
    std::int64_t active = 0, waiting = 0;
    for (const auto& g : gates_) {
      active += g->gate().core().active();
      waiting += g->gate().core().waiting();
    }
    ctx_.rec.series.sample(ctx_.sched.now_ns(), active, ctx_.service.in_flight(), waiting);
  }

  bool stopped() const noexcept { return mon_.stopped(); }
  bool torn_down() const noexcept { return mon_.torn_down(); }
  void tear_down() noexcept { mon_.tear_down(); }
  // Into the run's record, once torn down: invariants, probes and the trace.
  [[gnu::noinline]] void record_results();

  // Every trace entry of the run also goes to `sink` (set before the run starts).
  void stream_trace(check::trace_sink& sink) {
    sink_ = &sink;
    mon_.stream_trace(check::trace_stream<live_entry>{&stream_entry, this});
  }

 private:
  // An entry's source as the report names it: its gate, else "fault" or "request".
  static std::string_view source_of(const live_entry& e);
  // trace_ring's stream: one entry to sink_ as a check::trace_line.
  static void stream_entry(void* self, const live_entry& e) noexcept {
    static_cast<fifo_monitors*>(self)->sink_->entry(
        check::trace_line{e.at_ns, source_of(e), e.what, e.active, e.waiting, e.ref});
  }
  // Why the portal holds more work than its cap; `beginning`: the request
  // whose work begins now (its lease is still the handler's, not yet its own).
  [[gnu::noinline, gnu::cold]] std::vector<check::cause> portal_causes(const request_state* beginning) const;
  // A violation of gate `g`'s own invariants: `what` and its cause (the gate's
  // mutation, or the team's core that runs in it).
  [[gnu::noinline, gnu::cold]] check::finding mutant(const gate_slot& g, std::string what) const;
  // The same for liveness: the first gate that runs a mutation, if one does.
  [[gnu::noinline, gnu::cold]] check::finding any_mutant(std::string what) const;

  check::monitor<live_entry> mon_;
  run_context& ctx_;
  const gate_set& gates_;
  check::trace_sink* sink_ = nullptr;
  const request_pool& pool_;
  std::vector<vtime_ns> crashes_;  // when each ended lifetime crashed (index: its generation)
  std::optional<fifo::core_failure> core_failure_;  // the first core that failed, with its gate's name
};

inline void gate_slot::on_event(const fifo::event& e) { monitors_.on_gate_event(*this, e); }
inline void gate_slot::on_gate_change(const sim_core& core) { monitors_.on_gate_change(*this, core); }
inline void gate_slot::on_breach(breach_kind kind, std::string what) {
  monitors_.on_core_breach(*this, kind, std::move(what));
}
inline void gate_slot::on_failure(const fifo::core_failure& f) { monitors_.on_core_failure(*this, f); }

inline void fifo_monitors::on_gate_event(gate_slot& g, const fifo::event& e) {
  if (mon_.torn_down()) return;
  trace(&g, fifo::to_string(e.st).data(), e.active, e.waiting, e.ticket);
  ctx_.rec.metrics.gate_inflight_max = std::max(ctx_.rec.metrics.gate_inflight_max, e.active);
  sample_series();
  ctx_.rec.metrics.waiting_max = std::max(ctx_.rec.metrics.waiting_max, e.waiting);
  const fifo::config& cfg = g.gate().core().cfg();
  // The gate furthest above its cap (this one, unless another is further
  // above its own): the level the invariant judges after this event.
  const gate_slot* worst_active = &g;
  const gate_slot* worst_waiting = &g;
  if (gates_.size() > 1) [[unlikely]] {
    auto excess = [](const gate_slot* s, bool active) {
      const sim_core& c = s->gate().core();
      return active ? c.active() - c.cfg().max_active : c.waiting() - c.cfg().max_waiting;
    };
    for (const auto& other : gates_) {
      if (excess(other.get(), true) > excess(worst_active, true)) worst_active = other.get();
      if (excess(other.get(), false) > excess(worst_waiting, false)) worst_waiting = other.get();
    }
  }
  const bool own_active = worst_active == &g;
  mon_.level(inv_gate_inflight, own_active ? e.active : worst_active->gate().core().active(),
             worst_active->gate().core().cfg().max_active, [&] {
               const sim_core& c = worst_active->gate().core();
               if (!own_active)
                 return mutant(*worst_active, worst_active->name + ": " + std::to_string(c.active()) +
                                                  " leases active, above max_active " +
                                                  std::to_string(c.cfg().max_active));
               return mutant(g, g.name + ": " + std::string(fifo::to_string(e.st)) + " ticket " +
                                    std::to_string(e.ticket) + " made " + std::to_string(e.active) +
                                    " leases active, above max_active " + std::to_string(cfg.max_active));
             });
  const bool own_waiting = worst_waiting == &g;
  mon_.level(inv_waiting, own_waiting ? e.waiting : worst_waiting->gate().core().waiting(),
             worst_waiting->gate().core().cfg().max_waiting, [&] {
               const sim_core& c = worst_waiting->gate().core();
               return mutant(*worst_waiting, worst_waiting->name + ": " +
                                                 std::to_string(own_waiting ? e.waiting : c.waiting()) +
                                                 " tickets waiting, above max_waiting " +
                                                 std::to_string(c.cfg().max_waiting));
             });
  switch (e.st) {
    case fifo::status::admitted:
    case fifo::status::promoted:
      ++g.granted;
      if (e.st == fifo::status::promoted) {
        ADMIT_PROBE(fifo_promoted);
        queue_order& order = g.order();
        const queue_order::queued_ticket* oldest = order.oldest();
        const bool in_order = oldest != nullptr && oldest->ticket == e.ticket;
        mon_.check(inv_fifo_order, in_order, [&] {
          return mutant(g, g.name + ": promoted ticket " + std::to_string(e.ticket) + " while ticket " +
                               (oldest == nullptr ? std::string("(none)") : std::to_string(oldest->ticket)) +
                               " had waited longer");
        });
        if (in_order) order.pop_oldest();
        else if (queue_order::queued_ticket* q = order.still_queued(e.ticket)) q->left = true;
      } else if (g.order().any_recorded()) {
        // Admitted straight away while others wait: a newcomer overtook the queue.
        const queue_order::queued_ticket* oldest = g.order().oldest();
        mon_.check(inv_fifo_order, oldest == nullptr, [&] {
          return mutant(g, g.name + ": admitted newcomer ticket " + std::to_string(e.ticket) + " while ticket " +
                               std::to_string(oldest->ticket) + " was waiting");
        });
      }
      break;
    case fifo::status::queued:
      ADMIT_PROBE(fifo_queued);
      g.order().queued(e.ticket);
      break;
    case fifo::status::released:
      ++g.released;
      mon_.check(inv_released_once, g.released <= g.granted && e.active >= 0, [&] {
        return mutant(g, g.name + ": release number " + std::to_string(g.released) + " but only " +
                             std::to_string(g.granted) + " leases were granted (active " + std::to_string(e.active) +
                             ")");
      });
      break;
    case fifo::status::wait_timeout:
    case fifo::status::wait_cancelled: {
      queue_order::queued_ticket* q = g.order().still_queued(e.ticket);
      const bool was_waiting = q != nullptr;
      if (q != nullptr) q->left = true;
      if (e.st == fifo::status::wait_timeout) was_waiting ? ADMIT_PROBE(fifo_wait_timeout) : ADMIT_PROBE(fifo_promotion_beat_deadline);
      else was_waiting ? ADMIT_PROBE(fifo_cancelled_waiting) : ADMIT_PROBE(fifo_promotion_beat_cancel);
      break;
    }
    case fifo::status::queue_full:
      ADMIT_PROBE(fifo_queue_full);
      break;
  }
}

inline void fifo_monitors::on_portal_begin(const request_state& r) {
  ctx_.rec.metrics.portal_inflight_max = std::max(ctx_.rec.metrics.portal_inflight_max, ctx_.service.in_flight());
  trace(nullptr, "portal begin", ctx_.service.in_flight(), 0, r.number);
  sample_series();
  if (lane* l = ctx_.rec.series.lane_for(r.number)) l->work_start_ns = ctx_.sched.now_ns();
  mon_.level(inv_portal_inflight, ctx_.service.in_flight(), ctx_.service.cap(), [&] {
    return check::finding{"portal: request " + r.a.id() + " made " + std::to_string(ctx_.service.in_flight()) +
                              " requests in flight, above the portal's cap " + std::to_string(ctx_.service.cap()),
                          portal_causes(&r)};
  });
}

}  // namespace admit::world::fifo_world
