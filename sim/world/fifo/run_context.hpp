// run_context: what every part of one FIFO run refers to: the scenario and
// seed, the scheduler, the server process (sim/world/fifo_process.hpp), the
// run's record and the portal (portal.hpp).
//
// Why one struct: each part holds one reference to it instead of one to
// each of these, and reaches each at a fixed offset from it; the world holds
// it by value, first, so it outlives every other part.
#pragma once

#include <cstdint>

#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/fifo/portal.hpp"
#include "sim/world/fifo_process.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::fifo_world {

struct run_context {
  run_context(const scenario::scenario& s, std::uint64_t run_seed) : sc(s), seed(run_seed), proc(sched), service(s) {
    rec.seed = run_seed;
  }
  run_context(const run_context&) = delete;
  run_context& operator=(const run_context&) = delete;

  const scenario::scenario& sc;
  const std::uint64_t seed;
  sim::scheduler sched;
  fifo_process proc;
  run_record rec;
  portal service;  // the portal: the service behind the gates
};

}  // namespace admit::world::fifo_world
