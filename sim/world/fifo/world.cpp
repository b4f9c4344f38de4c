#include "sim/world/fifo/world.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "gate/admit_assert.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/world/arrivals.hpp"
#include "sim/world/fifo/clients.hpp"
#include "sim/world/fifo/gate_slot.hpp"
#include "sim/world/fifo/monitors.hpp"
#include "sim/world/fifo/observations.hpp"
#include "sim/world/fifo/portal.hpp"
#include "sim/world/fifo/process_faults.hpp"
#include "sim/world/fifo/request_handler.hpp"
#include "sim/world/fifo/request_pool.hpp"
#include "sim/world/fifo/responses.hpp"
#include "sim/world/fifo/run_context.hpp"
#include "sim/world/fifo_process.hpp"
#include "sim/world/run_guard.hpp"

namespace admit::world::fifo_world {

void recycle(request_state* r) noexcept { r->pool.owner->put_back(r); }

namespace {

// Members in dependency order: each part refers only to parts above it,
// except that the monitors read the gates (built last, so that their pending
// work, and the request states it holds, goes first).
class world final {
 public:
  world(const scenario::scenario& sc, std::uint64_t seed, const std::vector<time_span>& lanes_around,
        check::trace_sink* trace_to, const own_gate* og)
      : ctx_(sc, seed),
        guard_(sc.checks.max_events, sc.checks.max_wall_ns),
        src_(sc, seed),
        monitors_(ctx_, gates_, pool_),
        responses_(ctx_, monitors_),
        obs_(sc, src_.total()),
        clients_(ctx_, gates_, obs_, responses_, monitors_),
        handler_(ctx_, responses_, monitors_),
        faults_(ctx_, gates_, pool_, responses_, clients_, monitors_),
        pump_(ctx_.sched, src_, *this),
        gates_(monitors_, sc, process_executor(ctx_.sched.get_executor(), ctx_.proc), og, seed) {
    if (og != nullptr) ctx_.rec.gate_core = og->name;
    for (const auto& g : sc.gates)
      if (g.process && ctx_.rec.gate_core.empty()) ctx_.rec.gate_core = process_core::name_of(*g.process);
    ctx_.rec.series.keep_lanes_in(lanes_around);
    if (trace_to != nullptr) monitors_.stream_trace(*trace_to);
  }

  ~world() {
    // Pending work refers to the gates: destroy it while they are alive.
    monitors_.tear_down();
    ctx_.sched.shutdown();
    // Work a stall still holds (a run that ended inside one) refers to the
    // gates and the request states: it goes now, not after them.
    ctx_.proc.drop_held();
    ctx_.sched.shutdown();
  }

  run_record run() {
    faults_.schedule();
    pump_.start();
    // Snapshot instants, in order; each sees every event due at or before it.
    std::set<vtime_ns> instants = obs_.snapshot_instants();
    // checks.liveness_horizon stops the run there too: once every event due by then has run, the
    // system must be idle (when nothing is left to run, finish() judges the same end state). The
    // check adds no event and does not move the clock, so a report's events and times are the
    // ones the run had without it.
    const std::optional<vtime_ns> lh = ctx_.sc.checks.liveness_horizon_ns;
    if (lh) instants.insert(*lh);
    sim::run_status st = sim::run_status::idle;
    auto spend = [&](vtime_ns horizon) { st = guard_.run(ctx_.sched, horizon); };
    for (vtime_ns t : instants) {
      if (t > ctx_.sc.checks.horizon_ns) break;
      spend(t);
      if (st == sim::run_status::stopped || st == sim::run_status::event_limit) break;
      if (lh && t == *lh && st == sim::run_status::time_limit) {
        // Events remain after it, so moving the clock to it changes no later time.
        if (ctx_.sched.now_ns() < t) ctx_.sched.run_until(t, 0);
        monitors_.check_idle(t, responses_.outstanding());
        if (monitors_.stopped()) {
          st = sim::run_status::stopped;
          break;
        }
      }
      if (!obs_.snapshot_due(t)) continue;
      if (ctx_.sched.now_ns() < t) ctx_.sched.run_until(t, 0);
      obs_.capture(t, gates_, ctx_.rec);
    }
    if (st != sim::run_status::stopped && st != sim::run_status::event_limit) spend(ctx_.sc.checks.horizon_ns);
    ctx_.rec.status = st;
    finish();
    // Tear down while the gates are alive; monitors ignore what teardown does
    // (leases of destroyed handlers returning to the gates).
    monitors_.tear_down();
    ctx_.sched.shutdown();
    monitors_.record_results();
    faults_.write_coverage(ctx_.rec);
    return std::move(ctx_.rec);
  }

  // From the pump, at the arrival's time.
  void on_arrival(const arrival& a) {
    req_ptr r = pool_.take();
    r->a = a;
    clients_.arrive(r);
    handler_.accept(std::move(r));
  }

 private:
  void finish() {
    // A release that broke the core inside a lease's destructor: raise it
    // here, where the caller adds the seed and the replay command.
    for (const auto& g : gates_) g->gate().rethrow_failure();
    for (const auto& g : gates_)
      if (g->gate().core().cfg().event_log_capacity > 0 &&
          g->gate().core().last_order() > static_cast<std::uint64_t>(g->gate().core().cfg().event_log_capacity))
        ADMIT_PROBE(fifo_event_log_wrapped);
    ctx_.rec.metrics.simulated_ns = ctx_.sched.now_ns();
    ctx_.rec.diagnostics = {.events = ctx_.sched.events_run(), .sequence_numbers = ctx_.sched.next_sequence(), .process = std::nullopt};
    check_accounts();
    // A child that failed before any call reached it (at its start, in a gate no request used).
    for (const auto& g : gates_)
      if (const recorded_core* u = g->gate().core().user(); u != nullptr && u->failure() != nullptr)
        monitors_.on_core_failure(*g, *u->failure());
    if (const std::optional<fifo::core_failure>& f = monitors_.core_failure()) {
      // A gate's child process could not go on: nothing after it is judged.
      ctx_.rec.inconclusive = inconclusive_reason{f->kind, f->detail};
      return;
    }
    if (monitors_.stopped()) return;
    // A run cut short is inconclusive: what it did not reach is not judged.
    const std::uint64_t total = src_.total();
    const std::uint64_t answered = ctx_.rec.metrics.requests - static_cast<std::uint64_t>(responses_.outstanding());
    const std::uint64_t pending = total - answered;
    ctx_.rec.inconclusive =
        guard_.reason(ctx_.rec.status, ctx_.sched.now_ns(), ctx_.sc.checks.horizon_ns, pending, total);
    if (ctx_.rec.inconclusive) return;
    monitors_.check_end(src_.exhausted(), responses_.outstanding());
  }

  // O(n), once: the world's own bookkeeping agrees with itself. Every request
  // that arrived and has not ended is one the process took and something
  // still refers to (so none was lost unanswered), and each request state is
  // held or pooled, once.
  void check_accounts() const {
    pool_.check_accounts();
    std::int64_t unanswered = 0;
    pool_.for_each_live([&](const request_state& r) {
      ADMIT_ASSERT(r.handler.accepted || r.out.responded, "a live request was taken by the process or refused");
      unanswered += !r.out.responded;
    });
    ADMIT_ASSERT(responses_.outstanding() >= 0, "outstanding requests are never negative");
    ADMIT_ASSERT(responses_.outstanding() == unanswered,
                 "outstanding requests are exactly the accepted ones not yet answered");
    ADMIT_ASSERT(ctx_.rec.metrics.requests == src_.emitted() - (pump_.pending() ? 1 : 0),
                 "every arrival given, except the one pending, has arrived");
  }

  run_context ctx_;  // first: the scheduler, the process and the record outlive every part
  run_guard guard_;
  arrival_source src_;
  request_pool pool_;
  fifo_monitors monitors_;
  responses responses_;
  observations obs_;
  clients clients_;
  request_handler handler_;
  process_faults faults_;
  arrival_pump<world> pump_;
  gate_set gates_;  // last: see above
};

}  // namespace

run_record run(const scenario::scenario& sc, std::uint64_t seed, const std::vector<time_span>& lanes_around,
               check::trace_sink* trace_to, const own_gate* og) {
  world w(sc, seed, lanes_around, trace_to, og);
  return w.run();
}

}  // namespace admit::world::fifo_world
