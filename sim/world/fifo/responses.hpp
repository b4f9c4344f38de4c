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
#include "sim/world/run_record.hpp"

namespace admit::world::fifo_world {

class responses {
 public:
  responses(sim::scheduler& sched, run_record& rec, fifo_monitors& m) : sched_(sched), rec_(rec), monitors_(m) {}

  void arrived(const request_state& r) {
    ADMIT_ASSERT(!r.out.responded, "a request arrives unanswered");
    ++rec_.metrics.requests;
    ++outstanding_;
  }

  // The request ends with `http_status` (0: no answer, the connection was
  // refused or reset) and `status`, a static string.
  void respond(request_state& r, int http_status, const char* status) {
    if (monitors_.torn_down()) return;
    ADMIT_ASSERT(!r.out.responded, "a request is answered at most once");
    ADMIT_ASSERT(r.accepted || http_status == 0, "only a request the process took gets an HTTP answer");
    ADMIT_ASSERT(outstanding_ > 0, "a request ends only after it arrived");
    r.out.responded = true;
    r.out.http_status = http_status;
    r.out.status = status;
    r.out.responded_ns = sched_.now_ns();
    --outstanding_;
    if (http_status == 200)
      ++rec_.metrics.completed;
    else
      ++rec_.metrics.refused[status];
    monitors_.trace(nullptr, status, http_status, 0, r.number);
    if (lane* l = rec_.series.lane_for(r.number)) {
      l->ended_ns = sched_.now_ns();
      l->outcome = status;
    }
    if (r.keep) rec_.outcomes[r.out.id] = r.out;
  }

  // The client's read timeout came before the answer.
  void client_gave_up(request_state& r) {
    ADMIT_ASSERT(!r.out.responded, "a client gives up only on a request not yet answered");
    r.out.client_timed_out = true;
    ++rec_.metrics.client_timeouts;
    monitors_.hit(fifo_monitors::p_client_gave_up_first);
    monitors_.trace(nullptr, "client ReadTimeout", 0, 0, r.number);
    if (lane* l = rec_.series.lane_for(r.number)) l->gave_up_ns = sched_.now_ns();
    if (r.keep) rec_.outcomes[r.out.id] = r.out;
  }

  // Requests that arrived and have not ended: never negative.
  std::int64_t outstanding() const noexcept { return outstanding_; }

 private:
  sim::scheduler& sched_;
  run_record& rec_;
  fifo_monitors& monitors_;
  std::int64_t outstanding_ = 0;
};

}  // namespace admit::world::fifo_world
