// fifo_world::world: one run of a scenario with FIFO gates (sim/world/world.hpp
// describes the simulated system), put together from its parts:
//  * run_context (run_context.hpp): the scenario, the scheduler, the server
//    process (sim/world/fifo_process.hpp), the run's record and the portal
//    (portal.hpp, the service behind the gates), which the other parts share;
//  * gate_set / gate_slot (gate_slot.hpp): the gates, in the server process,
//    each with the order of its queued tickets (queue_order.hpp);
//  * fifo_monitors (monitors.hpp): the invariants, probes and trace, on check::monitor;
//  * request_pool (request_pool.hpp): the request states, reused;
//  * clients (clients.hpp) and request_handler (request_handler.hpp): the two
//    sides of each request; responses (responses.hpp): how each one ended;
//  * process_faults (process_faults.hpp): the fault schedule;
//  * observations (observations.hpp): the snapshots and outcomes the cases read;
//  * arrival_pump (sim/world/arrivals.hpp): the arrivals, one ahead.
// The world orders the run: faults first (at one instant a fault strikes
// before the arrivals due then), the arrivals, the snapshot instants and
// checks.liveness_horizon, the end, and the teardown.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/check/trace_sink.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/own_gate.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::fifo_world {

// A scenario with FIFO gates only: one run with `seed`; its timeline also
// keeps the lanes of the requests whose life meets `lanes_around`
// (timeline::keep_lanes_in), and every trace entry also goes to `trace_to`
// when given (the caller tells it where the run begins and ends). With `og`,
// every gate runs that team's core (sim/world/own_gate.hpp) in place of
// admitsim's; the caller has checked that the scenario allows it.
run_record run(const scenario::scenario& sc, std::uint64_t seed, const std::vector<time_span>& lanes_around = {},
               check::trace_sink* trace_to = nullptr, const own_gate* og = nullptr);

}  // namespace admit::world::fifo_world
