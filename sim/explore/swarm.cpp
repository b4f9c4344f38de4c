#include "sim/explore/swarm.hpp"

#include <algorithm>

#include "sim/explore/scenario_json.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/world/fault_draw.hpp"

namespace admit::explore {

namespace {

// A rate: on or off by a fair coin, then uniform in [1, bound]. Both are drawn
// whatever the bound, so a bound of 0 does not shift the later draws.
std::int64_t swarm_rate(sim::prng& rng, std::int64_t bound) {
  const bool on = rng.uniform_u64(2) == 1;
  const std::int64_t rate = rng.uniform_i64(1, std::max<std::int64_t>(bound, 1));
  return on && bound > 0 ? rate : 0;
}

sim::vtime_ns swarm_length(sim::prng& rng, sim::vtime_ns bound) {
  const sim::vtime_ns hi = std::max<sim::vtime_ns>(bound, 1);
  return rng.uniform_i64(std::max<sim::vtime_ns>(hi / 10, 1), hi);
}

}  // namespace

swarm_config derive_swarm(const scenario::scenario& base, std::uint64_t seed) {
  swarm_config s;
  if (!base.faults.rates || !base.faults.rates->any()) return s;
  const scenario::fault_rates& b = *base.faults.rates;
  sim::prng rng = sim::substream(seed, "explore/swarm");
  s.bounded = true;
  s.rates.crash_per_hour = swarm_rate(rng, b.crash_per_hour);
  s.rates.partition_per_hour = swarm_rate(rng, b.partition_per_hour);
  s.rates.pause_per_hour = swarm_rate(rng, b.pause_per_hour);
  s.rates.clock_step_per_hour = swarm_rate(rng, b.clock_step_per_hour);
  s.rates.mean_duration_ns = swarm_length(rng, b.mean_duration_ns);
  s.rates.max_step_ns = swarm_length(rng, b.max_step_ns);
  // Drawn after the others, so that adding these kinds moved no earlier draw.
  s.rates.redis_restart_per_hour = swarm_rate(rng, b.redis_restart_per_hour);
  s.rates.redis_failover_per_hour = swarm_rate(rng, b.redis_failover_per_hour);
  s.rates.max_replication_lag_ns = swarm_length(rng, b.max_replication_lag_ns);
  s.rates.until_ns = b.until_ns;
  return s;
}

explored_scenario explore_seed(const scenario::scenario& base, std::uint64_t seed) {
  explored_scenario e;
  e.swarm = derive_swarm(base, seed);
  e.sc = base;
  e.sc.seed = seed;
  e.sc.faults.rates.reset();
  e.faults_from_file = base.faults.schedule.size();
  if (e.swarm.rates.any()) {
    const auto drawn = world::draw_faults(e.swarm.rates, world::nodes_of(base), seed, &e.sc.faults.draw_limited);
    e.faults_drawn = drawn.size();
    world::merge_faults(e.sc.faults.schedule, drawn);
  }
  return e;
}

nlohmann::ordered_json swarm_json(const explored_scenario& e) {
  nlohmann::ordered_json j;
  const swarm_config& s = e.swarm;
  j["bounded"] = s.bounded;
  j["crash_per_hour"] = s.rates.crash_per_hour;
  j["partition_per_hour"] = s.rates.partition_per_hour;
  j["pause_per_hour"] = s.rates.pause_per_hour;
  j["clock_step_per_hour"] = s.rates.clock_step_per_hour;
  j["redis_restart_per_hour"] = s.rates.redis_restart_per_hour;
  j["redis_failover_per_hour"] = s.rates.redis_failover_per_hour;
  j["mean_duration_ns"] = s.bounded ? s.rates.mean_duration_ns : 0;
  j["max_step_ns"] = s.bounded ? s.rates.max_step_ns : 0;
  j["max_replication_lag_ns"] = s.bounded ? s.rates.max_replication_lag_ns : 0;
  j["until_ns"] = s.rates.until_ns;
  j["faults_from_file"] = e.faults_from_file;
  j["faults_drawn"] = e.faults_drawn;
  return j;
}

std::string swarm_summary(const swarm_config& s) {
  if (!s.bounded) return "no fault rates in the scenario";
  auto kind = [](const char* name, std::int64_t rate) {
    std::string s = name;
    if (rate > 0) {
      s += ' ';
      s += std::to_string(rate);
      s += "/h";
    } else {
      s += " off";
    }
    return s;
  };
  std::string out = kind("crash", s.rates.crash_per_hour) + ", " + kind("partition", s.rates.partition_per_hour) +
                    ", " + kind("pause", s.rates.pause_per_hour) + ", " +
                    kind("clock_step", s.rates.clock_step_per_hour);
  if (s.rates.clock_step_per_hour > 0) out += " (max step " + duration_text(s.rates.max_step_ns) + ")";
  if (s.rates.redis_restart_per_hour > 0 || s.rates.redis_failover_per_hour > 0) {
    out += ", " + kind("redis_restart", s.rates.redis_restart_per_hour) + ", " +
           kind("redis_failover", s.rates.redis_failover_per_hour);
    if (s.rates.redis_failover_per_hour > 0) out += " (max lag " + duration_text(s.rates.max_replication_lag_ns) + ")";
  }
  out += ", mean duration " + duration_text(s.rates.mean_duration_ns) + ", until " + duration_text(s.rates.until_ns);
  return out;
}

}  // namespace admit::explore
