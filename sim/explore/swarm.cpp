#include "sim/explore/swarm.hpp"

#include <algorithm>

#include "gate/admit_assert.hpp"
#include "sim/codec/json_codec.hpp"
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
  // The rates in file order. The shared lengths are drawn where they were
  // drawn when the kinds that read them came: mean_duration and max_step
  // after the first four rates, max_replication_lag after the sixth. A seed
  // keeps its swarm, and a new kind's rate is drawn after all of these.
  static_assert(scenario::fault_rate_count >= 6, "the draws below follow the first six rates");
  for (std::size_t i = 0; i < scenario::fault_rate_count; ++i) {
    const scenario::fault_kind k = scenario::fault_rates_file_order[i];
    s.rates.per_hour_of(k) = swarm_rate(rng, b.per_hour_of(k));
    if (i == 3) {
      s.rates.mean_duration_ns = swarm_length(rng, b.mean_duration_ns);
      s.rates.max_step_ns = swarm_length(rng, b.max_step_ns);
    }
    if (i == 5) s.rates.max_replication_lag_ns = swarm_length(rng, b.max_replication_lag_ns);
  }
  s.rates.until_ns = b.until_ns;
  s.rates.restart_persistence = b.restart_persistence;  // the scenario's, not a draw of the swarm
  return s;
}

explored_scenario explored_with(const scenario::scenario& base, const swarm_config& swarm,
                                const world::fault_nodes& nodes, std::uint64_t seed) {
  explored_scenario e;
  e.swarm = swarm;
  e.sc = base;
  e.sc.seed = seed;
  e.sc.faults.rates.reset();
  e.faults_from_file = base.faults.schedule.size();
  if (e.swarm.rates.any()) {
    e.drawn = world::draw_faults(e.swarm.rates, nodes, seed, &e.sc.faults.draw_limited);
    e.faults_drawn = e.drawn.size();
    world::merge_faults(e.sc.faults.schedule, e.drawn);
  }
  ADMIT_ASSERT(e.sc.faults.schedule.size() == e.faults_from_file + e.faults_drawn && !e.sc.faults.rates,
               "the plan holds the file's faults and the drawn ones, and no rates");
  return e;
}

explored_scenario explore_seed(const scenario::scenario& base, std::uint64_t seed) {
  return explored_with(base, derive_swarm(base, seed), world::nodes_of(base), seed);
}

swarm_record swarm_record::of(const swarm_config& s, std::size_t faults_from_file) {
  swarm_record r;
  r.bounded = s.bounded;
  for (std::size_t i = 0; i < scenario::fault_rate_count; ++i) r.per_hour[i] = s.rates.per_hour_of(scenario::fault_rates_file_order[i]);
  r.mean_duration_ns = s.bounded ? s.rates.mean_duration_ns : 0;
  r.max_step_ns = s.bounded ? s.rates.max_step_ns : 0;
  r.max_replication_lag_ns = s.bounded ? s.rates.max_replication_lag_ns : 0;
  r.until_ns = s.rates.until_ns;
  r.faults_from_file = faults_from_file;
  return r;
}

nlohmann::ordered_json swarm_record::to_json() const {
  nlohmann::ordered_json j;
  j["bounded"] = bounded;
  for (std::size_t i = 0; i < scenario::fault_rate_count; ++i)
    j[scenario::fault_row(scenario::fault_rates_file_order[i]).rate.key] = per_hour[i];
  j["mean_duration_ns"] = mean_duration_ns;
  j["max_step_ns"] = max_step_ns;
  j["max_replication_lag_ns"] = max_replication_lag_ns;
  j["until_ns"] = until_ns;
  j["faults_from_file"] = faults_from_file;
  if (faults_drawn) j["faults_drawn"] = *faults_drawn;
  return j;
}

swarm_record swarm_record::from_json(const nlohmann::ordered_json& j, const std::string& path, bool drawn) {
  swarm_record r;
  r.bounded = codec::read_bool(j, path, "bounded");
  for (std::size_t i = 0; i < scenario::fault_rate_count; ++i)
    r.per_hour[i] = codec::read_i64(j, path, scenario::fault_row(scenario::fault_rates_file_order[i]).rate.key);
  r.mean_duration_ns = codec::read_i64(j, path, "mean_duration_ns");
  r.max_step_ns = codec::read_i64(j, path, "max_step_ns");
  r.max_replication_lag_ns = codec::read_i64(j, path, "max_replication_lag_ns");
  r.until_ns = codec::read_i64(j, path, "until_ns");
  r.faults_from_file = codec::read_u64(j, path, "faults_from_file");
  if (drawn) r.faults_drawn = codec::read_u64(j, path, "faults_drawn");
  else if (j.contains("faults_drawn"))
    throw codec::codec_error(path + "/faults_drawn", "expected no faults drawn in the scenario's bounds");
  return r;
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
  // The first four rates always (the line explore reports have always had);
  // the later ones, the Redis kinds first, together when any of them is on,
  // so that a FIFO scenario's line names no Redis. Each with the bound it draws from.
  using scenario::fault_kind;
  bool later_on = false;
  for (std::size_t i = 4; i < scenario::fault_rate_count; ++i)
    later_on |= s.rates.per_hour_of(scenario::fault_rates_file_order[i]) > 0;
  std::string out;
  for (std::size_t i = 0; i < scenario::fault_rate_count; ++i) {
    if (i >= 4 && !later_on) break;
    const fault_kind k = scenario::fault_rates_file_order[i];
    const std::int64_t rate = s.rates.per_hour_of(k);
    out += (i == 0 ? "" : ", ") + kind(scenario::fault_row(k).name, rate);
    if (rate > 0 && k == fault_kind::clock_step) out += " (max step " + duration_text(s.rates.max_step_ns) + ")";
    if (rate > 0 && k == fault_kind::redis_failover)
      out += " (max lag " + duration_text(s.rates.max_replication_lag_ns) + ")";
  }
  out += ", mean duration " + duration_text(s.rates.mean_duration_ns) + ", until " + duration_text(s.rates.until_ns);
  return out;
}

}  // namespace admit::explore
