// clients: the client side of each request of the FIFO world.
//
// A client arrives (its request is numbered, routed to its gate and given
// its service time), reads with its read timeout (scenario or request, or
// the one a client-timeout burst sets: this part holds that fault's effect),
// and may disconnect at its cancel time, which reaches the handler through
// the process as a cancellation. The server side is request_handler.
#pragma once

#include <boost/asio/cancellation_type.hpp>
#include <cstdint>
#include <optional>

#include "gate/admit_assert.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/fifo/gate_slot.hpp"
#include "sim/world/fifo/monitors.hpp"
#include "sim/world/fifo/observations.hpp"
#include "sim/world/fifo/request.hpp"
#include "sim/world/fifo/responses.hpp"
#include "sim/world/fifo/run_context.hpp"
#include "sim/world/fifo_process.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::fifo_world {

class clients {
 public:
  clients(run_context& ctx, gate_set& gates, const observations& obs, responses& resp, fifo_monitors& m)
      : ctx_(ctx),
        gates_(gates),
        obs_(obs),
        responses_(resp),
        monitors_(m),
        service_rng_(sim::substream(ctx.seed, "service")) {}

  // The request `r` (its arrival set) arrives now; the caller then hands it to the server.
  void arrive(const req_ptr& r) {
    ADMIT_ASSERT(r->a.gate_index < gates_.size(), "a request goes to a gate of the scenario");
    r->number = ++request_count_;
    r->gate = &gates_[r->a.gate_index];
    r->service_ns = r->a.service_ns ? *r->a.service_ns : ctx_.sc.service.service_time.sample(service_rng_);
    r->out.arrived_ns = ctx_.sched.now_ns();
    r->keep = obs_.keeps([&] { return r->a.id(); });
    if (r->keep) r->out.id = r->a.id();
    responses_.arrived(*r);
    monitors_.trace(nullptr, "arrive", 0, 0, r->number);
    if (lane* l = ctx_.rec.series.lane_for(r->number)) {
      l->arrived_ns = ctx_.sched.now_ns();
      if (r->a.spec != nullptr) l->id = r->a.spec->id;
    }

    std::optional<vtime_ns> read_timeout =
        r->a.client_timeout_ns ? r->a.client_timeout_ns : ctx_.sc.service.client_timeout_ns;
    if (ctx_.sched.now_ns() < burst_until_) read_timeout = burst_timeout_ns_;  // a client_timeout_burst
    if (read_timeout) {
      ctx_.sched.schedule_after(*read_timeout, [this, r] {
        if (r->out.responded) return;
        responses_.client_gave_up(*r);
      });
    }
    if (r->a.cancel_at_ns && *r->a.cancel_at_ns <= ctx_.sched.now_ns()) {
      // Cancelled at (or before) its arrival: the handler sees the flag at its
      // first step and acquires nothing. Scheduled instead, the cancellation
      // would land after the handler's acquire at the same instant, so the
      // request would hold a slot it never should have had.
      monitors_.trace(nullptr, "cancel", 0, 0, r->number);
      r->handler.cancel_requested = true;
    } else if (r->a.cancel_at_ns) {
      ctx_.sched.schedule_at(*r->a.cancel_at_ns, [this, r] {
        if (r->out.responded) return;
        monitors_.trace(nullptr, "cancel", 0, 0, r->number);
        r->handler.cancel_requested = true;
        // Before its first step a handler has nothing to cancel: it sees the
        // flag when it starts. The disconnect reaches the handler through the
        // process (late after a stall; never once the process died).
        if (r->handler.started)
          ctx_.proc.deliver(r->handler.gen, [r] { r->cancel.emit(boost::asio::cancellation_type::terminal); });
      });
    }
  }

  // A client-timeout burst: clients arriving before `until_ns` read with `timeout_ns`.
  void burst(vtime_ns until_ns, vtime_ns timeout_ns) noexcept {
    burst_until_ = until_ns;
    burst_timeout_ns_ = timeout_ns;
  }

 private:
  run_context& ctx_;
  gate_set& gates_;
  const observations& obs_;
  responses& responses_;
  fifo_monitors& monitors_;
  sim::prng service_rng_;
  std::uint64_t request_count_ = 0;
  vtime_ns burst_until_ = 0;  // client_timeout_burst: arrivals before this read with burst_timeout_ns_
  vtime_ns burst_timeout_ns_ = 0;
};

}  // namespace admit::world::fifo_world
