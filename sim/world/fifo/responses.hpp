// responses: how the requests of the FIFO world end, as their clients see it.
//
// The server answers each request once (200 completed, or the refusal and
// its reason) or the client sees its connection refused or reset; a client
// may stop reading first (its read timeout), which ends nothing on the
// server. This part records both into the run's record, counts the requests
// that arrived and have not ended, and keeps the outcomes the cases refer to.
#pragma once

#include <cstdint>

#include "gate/admit_assert.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/world/fifo/monitors.hpp"
#include "sim/world/fifo/request.hpp"
#include "sim/world/fifo/run_context.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::fifo_world {

class responses {
 public:
  responses(run_context& ctx, fifo_monitors& m) : ctx_(ctx), monitors_(m) {}

  void arrived(const request_state& r) {
    ADMIT_ASSERT(!r.out.responded, "a request arrives unanswered");
    ++ctx_.rec.metrics.requests;
    ++outstanding_;
  }

  // The request ends with `http_status` (0: no answer, the connection was
  // refused or reset) and `status`, a static string.
  void respond(request_state& r, int http_status, const char* status) {
    if (monitors_.torn_down()) return;
    ADMIT_ASSERT(!r.out.responded, "a request is answered at most once");
    ADMIT_ASSERT(r.handler.accepted || http_status == 0, "only a request the process took gets an HTTP answer");
    ADMIT_ASSERT(outstanding_ > 0, "a request ends only after it arrived");
    r.out.responded = true;
    r.out.http_status = http_status;
    if (r.keep) r.out.status = status;  // read only through the kept outcomes (a string copy per request otherwise)
    r.out.responded_ns = ctx_.sched.now_ns();
    --outstanding_;
    if (http_status == 200)
      ++ctx_.rec.metrics.completed;
    else
      ++ctx_.rec.metrics.refused[status];
    monitors_.trace(nullptr, status, http_status, 0, r.number);
    if (lane* l = ctx_.rec.series.lane_for(r.number)) {
      l->ended_ns = ctx_.sched.now_ns();
      l->outcome = status;
    }
    if (r.keep) ctx_.rec.outcomes[r.out.id] = r.out;
  }

  // The client's read timeout came before the answer.
  void client_gave_up(request_state& r) {
    ADMIT_ASSERT(!r.out.responded, "a client gives up only on a request not yet answered");
    r.out.client_timed_out = true;
    ++ctx_.rec.metrics.client_timeouts;
    ADMIT_PROBE(fifo_client_gave_up_first);
    monitors_.trace(nullptr, "client ReadTimeout", 0, 0, r.number);
    if (lane* l = ctx_.rec.series.lane_for(r.number)) l->gave_up_ns = ctx_.sched.now_ns();
    if (r.keep) ctx_.rec.outcomes[r.out.id] = r.out;
  }

  // Requests that arrived and have not ended: never negative.
  std::int64_t outstanding() const noexcept { return outstanding_; }

 private:
  run_context& ctx_;
  fifo_monitors& monitors_;
  std::int64_t outstanding_ = 0;
};

}  // namespace admit::world::fifo_world
