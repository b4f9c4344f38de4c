// fault_draw: a scenario's `faults.rates` turned into an explicit schedule,
// deterministically from the run seed.
//
// Model. Each kind of fault with a rate above zero is a Poisson process of
// that rate (per hour of virtual time) from time 0 until `rates.until`: the
// gaps between strikes are exponential with mean 3600 s / rate. Every kind
// draws from its own sub-stream of the run seed ("faults/crash",
// "faults/pause", "faults/partition", "faults/clock_step",
// "faults/redis_restart", "faults/redis_failover"), so a change to
// one rate never moves the faults of another kind. Per strike, from that
// same stream and in this order:
//   crash       a worker, uniform; it restarts after an exponential time of
//               mean `mean_duration` (a drawn crash always restarts, so a
//               search cannot starve the fleet by killing every worker for
//               good; the explicit schedule can still crash one forever);
//   pause       a worker or, when a lease gate exists, Redis (uniform over
//               the workers and Redis); exponential length, mean `mean_duration`;
//   partition   with a lease gate: the link between one worker and Redis, or
//               Redis from every node (uniform over the workers and Redis);
//               without one (a FIFO scenario): the link between the worker
//               (the server process) and the portal. Exponential length as above;
//   clock_step  (the loader refuses a rate for a FIFO scenario) a worker's clock (never Redis's: the server's clock moves
//               only by the explicit schedule), by a step whose size is
//               uniform in [1ns, max_step] and whose sign is a fair coin;
//   redis_restart   (lease gate only) a persistence uniform among
//               `restart_persistence` (by default none or aof_everysec, a fair
//               coin); exponential downtime, mean `mean_duration`;
//   redis_failover  (lease gate only) a replication lag uniform in
//               [1ns, max_replication_lag]; exponential downtime as above.
// Lengths are at least 1ns and at most 24h, and, with
// `checks.liveness_horizon`, end by it (the loader's rule for scheduled
// faults). At most `drawn_faults_per_kind_max` faults of each kind are
// drawn; a kind that reaches it before `until` is reported (draw_faults'
// `limited`, faults_spec::draw_limited), and a run of such a schedule is
// inconclusive: never a silent cut that drops the later kinds' faults.
//
// The world merges the drawn faults after the explicit schedule (stable by
// time: at one instant the explicit ones apply first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace admit::world {

using sim::vtime_ns;

inline constexpr std::size_t drawn_faults_per_kind_max = 100'000;

// The nodes faults can strike.
struct fault_nodes {
  std::int64_t workers = 1;
  bool has_redis = false;                 // a lease gate exists
  std::int64_t redis_nodes = 1;           // the lease gate's; above 1 a drawn Redis fault draws its node
  std::optional<vtime_ns> heal_by_ns;     // checks.liveness_horizon: every drawn fault ends by then
};

fault_nodes nodes_of(const scenario::scenario& sc);

// The faults `rates` give for run seed `seed`, in time order. The kinds that
// reached drawn_faults_per_kind_max are appended to `limited` when given.
std::vector<scenario::fault_spec> draw_faults(const scenario::fault_rates& rates, const fault_nodes& nodes,
                                              std::uint64_t seed,
                                              std::vector<scenario::fault_kind>* limited = nullptr);

// `sc` with the faults its rates give for `seed` merged into its schedule and
// its rates removed: the scenario a run with that seed really runs, with
// faults.draw_limited naming the kinds cut by the limit. Without rates (or
// with every rate 0) it is `sc` unchanged.
scenario::scenario with_drawn_faults(const scenario::scenario& sc, std::uint64_t seed);

// Merges `drawn` into `schedule`, stable by time (at one instant the faults
// already in `schedule` come first).
void merge_faults(std::vector<scenario::fault_spec>& schedule, const std::vector<scenario::fault_spec>& drawn);

}  // namespace admit::world
