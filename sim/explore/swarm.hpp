// swarm: what one explore seed runs.
//
// Swarm testing (Groce et al., 2012): rather than every run facing every kind
// of fault at its full rate, each seed draws its own configuration inside the
// scenario's bounds, so one seed may crash many holders and skew no clock and
// the next the opposite. The bounds are the scenario's `faults.rates`; from
// the seed's sub-stream "explore/swarm", for each kind in the order crash,
// partition, pause, clock_step whose bound is above 0: a fair coin says
// whether the kind is on, and its rate is uniform in [1, bound] per hour
// (both are drawn either way, so the later draws never shift); then
// `mean_duration` and `max_step` are each uniform in [bound / 10, bound]
// (at least 1ns). `until` is the bound's.
//
// The seed's faults are then drawn from those rates by the world's own rule
// (sim/world/fault_draw.hpp, the same seed), merged after the file's explicit
// schedule, and the rates are removed: the explored scenario is an ordinary
// scenario with explicit fault times, whose run with the same seed is the
// seed's run. Workload randomness (arrival gaps, service times, jitter) comes
// from the same seed, as it does for `admitsim run --seed`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/fault_kinds.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/fault_draw.hpp"

namespace admit::explore {

struct swarm_config {
  bool bounded = false;          // the scenario has rates to draw from
  scenario::fault_rates rates;   // this seed's rates (a kind at 0 is off)
};

swarm_config derive_swarm(const scenario::scenario& base, std::uint64_t seed);

struct explored_scenario {
  scenario::scenario sc;         // seed set, rates removed, drawn faults in the schedule
  swarm_config swarm;
  std::size_t faults_from_file = 0;
  std::size_t faults_drawn = 0;
  std::vector<scenario::fault_spec> drawn;  // the drawn faults alone, in time order (a guided search mutates them)
};

// `base` with seed `seed` and the faults `swarm`'s rates give that seed (on
// `nodes`, world::nodes_of(base)) in its schedule beside the file's own; its
// rates removed. Every seed source builds its plans with it.
explored_scenario explored_with(const scenario::scenario& base, const swarm_config& swarm,
                                const world::fault_nodes& nodes, std::uint64_t seed);
// The swarm's own plan for `seed`: explored_with(base, derive_swarm(base, seed), ...).
explored_scenario explore_seed(const scenario::scenario& base, std::uint64_t seed);

// What a seed drew, as the reports write it: {"bounded", "crash_per_hour", ..., "until_ns",
// "faults_from_file", "faults_drawn"} ("bounds", the scenario's own rates, has no faults_drawn).
// Each rate in scenario::fault_rates_file_order; the lengths are 0 when nothing is bounded.
struct swarm_record {
  bool bounded = false;
  std::array<std::int64_t, scenario::fault_rate_count> per_hour{};  // in scenario::fault_rates_file_order
  std::int64_t mean_duration_ns = 0;
  std::int64_t max_step_ns = 0;
  std::int64_t max_replication_lag_ns = 0;
  std::int64_t until_ns = 0;
  std::uint64_t faults_from_file = 0;
  std::optional<std::uint64_t> faults_drawn;

  static swarm_record of(const swarm_config& s, std::size_t faults_from_file);
  nlohmann::ordered_json to_json() const;
  // `drawn`: faults_drawn is read (a seed's), or refused (the scenario's bounds). Throws
  // codec::codec_error naming the JSON path below `path`.
  static swarm_record from_json(const nlohmann::ordered_json& j, const std::string& path, bool drawn);
};

// One line: "crash 12/h, partition off, pause off, clock_step 300/h (max step 4.2s), mean duration 3s, until 2m".
std::string swarm_summary(const swarm_config& s);

}  // namespace admit::explore
