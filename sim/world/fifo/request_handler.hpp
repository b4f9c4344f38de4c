// request_handler: the server side of each request of the FIFO world.
//
// The server process takes the connection (refused while it is down, held
// while it stalls), then the handler runs: a chain of three steps, each the
// completion of the operation the previous one started (acquire a lease,
// then run the work at the portal through finish_worker), each bound to the
// request's cancellation slot. A cancellation reaches the handler only as
// the error code of the operation it is waiting on. (Callbacks rather than
// one coroutine per request: see docs/architecture.md, "The request
// handler".) Every step belongs to the process lifetime that took the
// request: a step of an ended lifetime is dropped, one due during a stall is
// held to its end.
#pragma once

#include <boost/asio/bind_cancellation_slot.hpp>
#include <cstdint>
#include <utility>

#include "gate/admit_assert.hpp"
#include "gate/asio/finish_worker.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/kernel/sim_executor.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/fifo/monitors.hpp"
#include "sim/world/fifo/portal.hpp"
#include "sim/world/fifo/request.hpp"
#include "sim/world/fifo/responses.hpp"
#include "sim/world/fifo/run_context.hpp"
#include "sim/world/fifo_process.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::fifo_world {

class request_handler {
 public:
  using error_code = boost::system::error_code;

  request_handler(run_context& ctx, responses& resp, fifo_monitors& m) : ctx_(ctx), responses_(resp), monitors_(m) {}

  // The server process takes the connection: refused while it is down; held
  // until a stall ends (accepted then in arrival order).
  void accept(req_ptr r) {
    if (!ctx_.proc.alive()) {
      responses_.respond(*r, 0, "connection_refused");
      return;
    }
    r->handler.accepted = true;
    r->handler.gen = ctx_.proc.generation();
    if (!ctx_.proc.stalled()) [[likely]] {
      handle(std::move(r));
      return;
    }
    const std::uint64_t gen = r->handler.gen;
    ctx_.proc.deliver(gen, [this, r = std::move(r)]() mutable { handle(std::move(r)); });
  }

 private:
  // The handler's first step.
  void handle(req_ptr r) {
    ADMIT_ASSERT(!r->handler.started, "a request's handler starts once");
    ADMIT_ASSERT(r->handler.accepted, "a handler runs only for a request the process took");
    r->handler.started = true;
    if (r->handler.cancel_requested) {  // cancelled before the handler ran: nothing was acquired
      responses_.respond(*r, 499, "cancelled");
      return;
    }
    request_slot slot(&r->cancel);
    r->gate->gate().async_acquire(boost::asio::bind_cancellation_slot(slot, acquired{this, std::move(r)}));
  }

  struct acquired {
    request_handler* h;
    req_ptr r;
    using allocator_type = request_allocator<void>;
    allocator_type get_allocator() const noexcept { return allocator_type(r->arena); }
    void operator()(error_code ec, sim_gate::lease lease) { h->on_acquired(std::move(r), ec, std::move(lease)); }
  };
  struct finished {
    request_handler* h;
    req_ptr r;
    using allocator_type = request_allocator<void>;
    allocator_type get_allocator() const noexcept { return allocator_type(r->arena); }
    // finish_worker dispatches the completion on this executor. Without one
    // it would be Asio's system executor, which calls std::terminate when a
    // handler throws, so a broken invariant on the release in on_finished
    // could not reach the caller. Dispatched inside a running scheduler, the
    // sim executor runs it inline all the same.
    using executor_type = sim::sim_executor;
    executor_type get_executor() const noexcept { return h->ctx_.sched.get_executor(); }
    void operator()(error_code ec) { h->on_finished(std::move(r), ec); }
  };
  // The work at the portal: it cannot be cancelled, so it needs no timer,
  // only one task at its end.
  struct start_work {
    request_handler* h;
    req_ptr r;
    template <class Done>
    void operator()(Done&& done) {
      const vtime_ns service_ns = r->service_ns;
      h->ctx_.sched.schedule_after(service_ns, [h = h, r = std::move(r), done = std::forward<Done>(done)]() mutable {
        h->work_ends(*r);
        std::move(done)(error_code{});
      });
    }
  };

  void work_begins(request_state& r) {
    if (monitors_.torn_down()) return;
    ctx_.service.begin();
    r.handler.at_portal = true;
    monitors_.on_portal_begin(r);
  }
  void work_ends(request_state& r) {
    if (monitors_.torn_down()) return;
    ctx_.service.end();
    r.handler.at_portal = false;
    monitors_.on_portal_end(r);
  }

  void on_acquired(req_ptr r, error_code ec, sim_gate::lease lease) {
    // The lifetime that held it ended: the handler is gone (its client got a
    // reset at the crash) and its lease goes back to the dead gate.
    if (r->handler.gen != ctx_.proc.generation() || ctx_.proc.stalled()) [[unlikely]] {
      hold_acquired(std::move(r), ec, std::move(lease));
      return;
    }
    ADMIT_ASSERT(!r->arena.in_use(), "the gate freed its waiter before the handler resumed");
    if (ec) {
      if (ec == gate::gate_errc::queue_full) responses_.respond(*r, 429, "queue_full");
      else if (ec == gate::gate_errc::wait_timeout) responses_.respond(*r, 503, "wait_timeout");
      else responses_.respond(*r, 499, "cancelled");
      return;
    }
    if (r->handler.cancel_requested) {  // granted, then cancelled before the handler resumed: no work starts
      lease.reset();
      responses_.respond(*r, 499, "cancelled");
      return;
    }
    const vtime_ns granted_at = ctx_.sched.now_ns();
    r->granted_ns = granted_at;
    if (lane* l = ctx_.rec.series.lane_for(r->number)) l->granted_ns = granted_at;
    ctx_.rec.metrics.wait_ns.add(granted_at - r->out.arrived_ns);
    if (r->a.fail == scenario::failure::constructor) {
      ADMIT_PROBE(fifo_worker_failed_starting);
      lease.reset();
      responses_.respond(*r, 500, "internal_error");
      return;
    }
    if (!ctx_.service.reachable(ctx_.sched.now_ns())) {  // a partition: the work cannot reach the portal
      lease.reset();
      responses_.respond(*r, 502, "portal_unreachable");
      return;
    }
    work_begins(*r);
    if (ctx_.sc.gates[r->a.gate_index].world_mut == scenario::world_mutation::release_before_work_ends)
      lease.reset();  // broken on purpose: the slot frees while the work still runs
    r->lease = std::move(lease);
    request_slot slot(&r->cancel);
    start_work work{this, r};
    gate::async_finish_worker(std::move(work), boost::asio::bind_cancellation_slot(slot, finished{this, std::move(r)}));
  }

  // Out of line, off the path of a process without faults: held to the end
  // of a stall, or dropped with a dead lifetime (deliver decides).
  [[gnu::noinline]] void hold_acquired(req_ptr r, error_code ec, sim_gate::lease lease) {
    const std::uint64_t gen = r->handler.gen;
    ctx_.proc.deliver(gen, [this, r = std::move(r), ec, lease = std::move(lease)]() mutable {
      on_acquired(std::move(r), ec, std::move(lease));
    });
  }
  [[gnu::noinline]] void hold_finished(req_ptr r, error_code wec) {
    const std::uint64_t gen = r->handler.gen;
    ctx_.proc.deliver(gen, [this, r = std::move(r), wec]() mutable { on_finished(std::move(r), wec); });
  }

  void on_finished(req_ptr r, error_code wec) {
    // The work ended at the portal (work_ends ran); the handler that waited
    // for it belongs to the process: gone after a crash, late after a stall.
    if (r->handler.gen != ctx_.proc.generation() || ctx_.proc.stalled()) [[unlikely]] {
      hold_finished(std::move(r), wec);
      return;
    }
    ctx_.rec.metrics.service_ns.add(ctx_.sched.now_ns() - r->granted_ns);
    r->lease.reset();  // only now has the work really ended
    if (wec) {
      ADMIT_PROBE(fifo_cancelled_working);
      responses_.respond(*r, 499, "cancelled");
    } else {
      responses_.respond(*r, 200, "completed");
    }
  }

  run_context& ctx_;
  responses& responses_;
  fifo_monitors& monitors_;
};

}  // namespace admit::world::fifo_world
