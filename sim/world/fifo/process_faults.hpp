// process_faults: the faults of a FIFO scenario, each applied by the part it
// strikes (docs/scenarios.md, "Faults in a FIFO scenario").
//
//  * crash worker:0 (the process, fifo_process.hpp): every lease, waiter and
//    handler of the process is lost with it; the clients of the requests it
//    held see their connection reset, in request order; the gates restart
//    empty (gate_set). With a duration, the process restarts after it.
//  * stall worker:0: the process holds everything due until the stall ends.
//  * partition portal: the portal (portal.hpp) is cut off for the duration.
//  * client_timeout_burst: clients arriving in it read with the burst's
//    timeout (clients.hpp).
// Each fault is traced and listed as a window of the run's timeline, and
// counted in the run's coverage buckets (coverage_buckets.hpp) by the state of
// the process as it began.
#pragma once

#include <array>
#include <cstdint>

#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/fifo/clients.hpp"
#include "sim/world/fifo/gate_slot.hpp"
#include "sim/world/fifo/monitors.hpp"
#include "sim/world/fifo/portal.hpp"
#include "sim/world/fifo/request_pool.hpp"
#include "sim/world/fifo/responses.hpp"
#include "sim/world/fifo/run_context.hpp"
#include "sim/world/coverage_buckets.hpp"
#include "sim/world/fifo_process.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::fifo_world {

class process_faults {
 public:
  process_faults(run_context& ctx, gate_set& gates, const request_pool& pool, responses& resp, clients& c,
                 fifo_monitors& m)
      : ctx_(ctx), gates_(gates), pool_(pool), responses_(resp), clients_(c), monitors_(m) {}

  // Schedules every fault of the scenario's schedule, in file order.
  void schedule();

  // The coverage buckets into the run's record (run_record::coverage), the near miss read from its metrics.
  void write_coverage(run_record& rec) const;

 private:
  void apply(const scenario::fault_spec& f);
  void crash();
  void restart();

  run_context& ctx_;
  gate_set& gates_;
  const request_pool& pool_;
  responses& responses_;
  clients& clients_;
  fifo_monitors& monitors_;
  std::array<std::uint64_t, fifo_bucket_count> counts_{};
};

}  // namespace admit::world::fifo_world
