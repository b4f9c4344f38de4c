// issue6_workload: the workload of issue 6 as a scenario, for the benchmarks.
//
// One FIFO gate with max_active 8, max_waiting 32 and a 5 s wait deadline;
// arrivals with exponential gaps of mean 100 ms; exponential service times
// of mean 700 ms (offered load 7 of 8 slots, so the queue fills and some
// waiters time out). Two ways to state the requests:
//   * explicit: request_spec entries (ids "r1"...), drawn from the prng
//     sub-streams "arrivals" and "service" of the seed. The whole list is in
//     memory up front (about 100 bytes per request).
//   * generated: one Poisson arrivals generator with the same means, which
//     the world draws lazily while it runs; memory does not grow with the
//     number of requests.
// Both set a horizon and an event budget large enough for the whole run.
#pragma once

#include <cstdint>

#include "sim/scenario/scenario.hpp"

namespace admit::bench {

scenario::scenario make_issue6_workload(std::int64_t requests, std::uint64_t seed);
scenario::scenario make_issue6_generated(std::int64_t requests, std::uint64_t seed);

}  // namespace admit::bench
