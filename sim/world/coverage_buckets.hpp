// coverage_buckets: the coverage buckets both worlds count beside their probes
// (docs/explore.md, "Coverage"), and what a search of a scenario can hit.
//
// The lease world's (lease/lease_coverage.hpp): each fault kind by the client
// phase of the workers it struck and by the server state, then its near
// misses. The FIFO world's (fifo/process_faults.hpp): each fault kind by the
// state of the process as it began: nothing in flight, a request waiting at a
// gate, every lease of a gate taken, work at the portal; then its near miss,
// the portal at its cap. Each bucket of a kind is named "<kind> while ..." or
// "<kind> with ...".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/check/results.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::world {

inline constexpr std::size_t fifo_state_count = 4;
inline constexpr const char* fifo_state_names[fifo_state_count] = {
    "with nothing in flight", "with a request waiting at a gate", "with every lease of a gate taken",
    "with work at the portal"};
inline constexpr const char* portal_cap_near_miss = "the portal reached its cap";
// Every FIFO bucket: fault kind x state, then the near miss.
inline constexpr std::size_t fifo_bucket_count = scenario::fault_kind_count * fifo_state_count + 1;

// The FIFO bucket names, in their fixed order.
const std::vector<std::string>& fifo_bucket_names();

// `coverage` (a run's or a search's: probes, then buckets) without the buckets of the fault kinds
// `sc` never strikes with (neither in its schedule nor drawn by its rates): no seed of a search of
// `sc` can hit them, so they count in no denominator. Probes and near misses stay.
void drop_buckets_never_struck(check::probe_counts& coverage, const scenario::scenario& sc);

}  // namespace admit::world
