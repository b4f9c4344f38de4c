// shrink: from a scenario and seed that break an invariant to the smallest
// scenario we can find that still breaks the same invariant in the same
// lease variant.
//
// Method. Every candidate is run (world::run_all with the same seed) and
// kept only if the target invariant still breaks; a run that throws counts
// as not breaking it. In order:
//  1. focus: only the target variant runs; cases go; `expect` becomes
//     "violation" of the target invariant, so `admitsim run` on the result
//     exits 0 exactly when it reproduces;
//  2. materialize: the workload up to the instant of the violation (all of it
//     for `liveness`, which is judged at the end) becomes explicit requests
//     with their drawn arrival and service times, cancellations, timeouts and
//     failures, so later removals cannot shift the random streams of the
//     requests that stay. A run stops at its first violation, so nothing
//     after that instant can matter; the candidate is still checked. When
//     more than `materialize_max` requests remain, generator counts are
//     halved (each halving checked) until they fit;
//  3. delta debugging (Zeller's ddmin) over the fault schedule (trying no
//     faults at all first), then over the explicit requests;
//  4. the gate: a lower cap (lease limit or FIFO max_active; the portal's
//     cap lowered by as much, so its margin over the gate stays) and, for
//     FIFO, a shorter queue; the fleet: faults moved from a high-numbered
//     worker to a lower one, fewer workers (never fewer than a fault names),
//     clock overrides dropped one by one;
//  5. each remaining fault's duration halved while it still breaks, and clock
//     steps likewise; each request's cancel_at, client_timeout and failure
//     dropped where it still breaks; gates no request uses dropped;
// then 3 to 5 again until a round changes nothing (at most `rounds_max`);
//  6. rebase: when the first event is late (a first arrival at 3h), every
//     absolute time moves earlier by whole seconds so that it lands between
//     1s and 2s (a drifting worker clock's offset takes the drift it had
//     gathered); kept only when the same invariant breaks at the same
//     instant less the shift.
// Every step is bounded by `max_runs` runs in all.
//
// Finally the result is written as JSON, loaded back through the loader and
// run once more: `reproduced` says whether that file breaks the invariant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace admit::explore {

struct shrink_target {
  std::string variant;    // the lease variant ("" for FIFO scenarios)
  std::string invariant;  // the invariant that must still break
};

struct shrink_limits {
  std::size_t max_runs = 5'000;
  std::uint64_t materialize_max = 10'000;
  int rounds_max = 4;
};

struct shrink_result {
  scenario::scenario minimal;
  bool reproduced = false;       // its own file, loaded back, breaks the target invariant
  bool started = false;          // the input broke the target invariant in the first place
  std::size_t faults_before = 0;
  std::size_t faults_after = 0;
  std::uint64_t requests_before = 0;  // explicit plus generated
  std::uint64_t requests_after = 0;
  std::int64_t workers_before = 0;
  std::int64_t workers_after = 0;
  std::size_t runs = 0;               // candidate runs
  bool budget_exhausted = false;
  sim::vtime_ns rebased_by_ns = 0;    // how much earlier the minimal scenario's times are (step 6; 0: not moved)
  sim::vtime_ns violation_at_ns = 0;  // in the minimal scenario
  std::string detail;                 // the minimal run's first violation of the target
};

shrink_result shrink(const scenario::scenario& sc, std::uint64_t seed, const shrink_target& target,
                     const shrink_limits& limits = {});

// Total requests of a scenario: explicit plus every generator's count.
std::uint64_t request_count(const scenario::scenario& sc);

}  // namespace admit::explore
