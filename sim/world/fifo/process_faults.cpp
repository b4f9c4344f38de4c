#include "sim/world/fifo/process_faults.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/world/fault_window_of.hpp"

namespace admit::world::fifo_world {

void process_faults::schedule() {
  for (const auto& f : ctx_.sc.faults.schedule) {
    const scenario::fault_spec* fp = &f;
    ctx_.sched.schedule_at(f.at_ns, [this, fp] { apply(*fp); });
  }
}

void process_faults::apply(const scenario::fault_spec& f) {
  using fk = scenario::fault_kind;
  const auto& texts = fifo_monitors::fault_texts;
  const vtime_ns now = ctx_.sched.now_ns();
  const vtime_ns dur = f.duration_ns.value_or(0);
  ctx_.rec.series.add_window(window_of(f, now));
  ADMIT_ASSERT(static_cast<std::size_t>(f.kind) < scenario::fault_kind_count, "a fault of a known kind");
  ++ctx_.rec.faults_injected[static_cast<std::size_t>(f.kind)];
  // The state it strikes in (a crash's gates before it empties them).
  bool waiting = false, full = false, busy = ctx_.service.in_flight() > 0;
  for (const auto& slot : gates_) {
    const auto& core = slot->gate().core();
    waiting = waiting || core.waiting() > 0;
    full = full || core.active() >= core.cfg().max_active;
    busy = busy || core.active() > 0 || core.waiting() > 0;
  }
  const std::size_t row = static_cast<std::size_t>(f.kind) * fifo_state_count;
  if (!busy) ++counts_[row + 0];
  if (waiting) ++counts_[row + 1];
  if (full) ++counts_[row + 2];
  if (ctx_.service.in_flight() > 0) ++counts_[row + 3];
  switch (f.kind) {
    case fk::crash:
      monitors_.trace(nullptr, texts[0], 0, 0, 0);
      crash();
      if (f.duration_ns) ctx_.sched.schedule_after(dur, [this] { restart(); });
      break;
    case fk::pause:
      monitors_.trace(nullptr, texts[2], 0, 0, 0);
      ctx_.proc.stall(now + dur);
      break;
    case fk::partition:
      monitors_.trace(nullptr, texts[3], 0, 0, 0);
      ctx_.service.cut_until(now + dur);
      break;
    case fk::client_timeout_burst:
      monitors_.trace(nullptr, texts[4], 0, 0, 0);
      clients_.burst(now + dur, f.client_timeout_ns);
      break;
    default:
      // The loader refuses every other kind for a FIFO scenario.
      throw std::invalid_argument("/faults: a FIFO scenario has no fault of kind " +
                                  std::string(scenario::fault_kind_names[static_cast<std::size_t>(f.kind)]));
  }
}

void process_faults::write_coverage(run_record& rec) const {
  const std::vector<std::string>& names = fifo_bucket_names();
  rec.coverage.clear();
  rec.coverage.reserve(names.size());
  for (std::size_t b = 0; b + 1 < names.size(); ++b) rec.coverage.emplace_back(names[b], counts_[b]);
  rec.coverage.emplace_back(names.back(), rec.metrics.portal_inflight_max >= ctx_.service.cap() ? 1 : 0);
  ADMIT_ASSERT(rec.coverage.size() == fifo_bucket_count, "every bucket written, in order");
}

// Work the process started at the portal runs on there to its end (the
// portal then sees it beside whatever the next lifetime admits).
void process_faults::crash() {
  if (!ctx_.proc.alive()) return;
  // Held by reference first: the crash drops the work a stall was holding,
  // and with it the last reference to a request not yet handled.
  std::vector<req_ptr> held;
  pool_.for_each_live([&](request_state& p) {
    if (p.handler.accepted && !p.out.responded) held.emplace_back(&p);
  });
  std::sort(held.begin(), held.end(), [](const req_ptr& a, const req_ptr& b) { return a->number < b->number; });
  monitors_.on_crash();
  ctx_.proc.crash();
  for (const req_ptr& p : held) responses_.respond(*p, 0, "connection_reset");
  gates_.sweep_dead(ctx_.sched.now_ns());
  gates_.rebuild_all(process_executor(ctx_.sched.get_executor(), ctx_.proc));
  monitors_.sample_series();
}

void process_faults::restart() {
  monitors_.trace(nullptr, fifo_monitors::fault_texts[1], 0, 0, 0);
  ctx_.proc.restart();
  gates_.sweep_dead(ctx_.sched.now_ns());
}

}  // namespace admit::world::fifo_world
