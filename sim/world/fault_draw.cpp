#include "sim/world/fault_draw.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>

#include "gate/admit_assert.hpp"
#include "sim/kernel/distribution.hpp"
#include "sim/kernel/prng.hpp"

namespace admit::world {

namespace {

constexpr vtime_ns hour_ns = 3600 * sim::sec;
constexpr vtime_ns day_ns = 24 * hour_ns;

using scenario::fault_kind;
using scenario::fault_spec;
using scenario::node_ref;

node_ref worker_node(std::int64_t w) { return node_ref{node_ref::kind::worker, w}; }
node_ref redis_node() { return node_ref{node_ref::kind::redis, 0}; }

// An exponential length of mean `mean_ns`, within [1ns, 24h] and ending by the heal-by instant.
// nullopt when no length fits (the fault strikes at the heal-by instant itself).
std::optional<vtime_ns> draw_length(sim::prng& rng, vtime_ns mean_ns, vtime_ns at_ns, const fault_nodes& nodes) {
  vtime_ns len = sim::duration_dist::exponential(std::max<vtime_ns>(mean_ns, 1)).sample(rng);
  len = std::clamp<vtime_ns>(len, 1, day_ns);
  if (nodes.heal_by_ns) {
    if (*nodes.heal_by_ns - at_ns < 1) return std::nullopt;
    len = std::min(len, *nodes.heal_by_ns - at_ns);
  }
  return len;
}

// One kind's Poisson process: appends its strikes to `out`.
// Returns false when the kind reached drawn_faults_per_kind_max before rates.until.
bool draw_kind(fault_kind kind, std::int64_t per_hour, const scenario::fault_rates& rates, const fault_nodes& nodes,
               std::uint64_t seed, std::vector<fault_spec>& out) {
  if (per_hour <= 0) return true;
  ADMIT_ASSERT(nodes.workers >= 1, "a fleet has at least one worker");
  const scenario::fault_kind_info& row = scenario::fault_row(kind);
  ADMIT_ASSERT(scenario::drawable(row), "only a kind with a rate is drawn");
  const std::string_view name = row.name;
  sim::prng rng = sim::substream(seed, "faults/" + std::string(name));
  const auto gap = sim::duration_dist::exponential(hour_ns / per_hour);
  const auto workers = static_cast<std::uint64_t>(nodes.workers);
  vtime_ns t = 0;
  std::size_t drawn = 0;
  for (;;) {
    t += gap.sample(rng);
    if (t >= rates.until_ns) return true;
    if (drawn >= drawn_faults_per_kind_max) return false;
    fault_spec f;
    f.at_ns = t;
    f.kind = kind;
    // What a strike of this kind strikes and its fields, from the kind's stream before its length.
    switch (kind) {
      case fault_kind::crash:
        f.target = worker_node(static_cast<std::int64_t>(rng.uniform_u64(workers)));
        break;
      case fault_kind::pause: {
        const std::uint64_t pick = rng.uniform_u64(workers + (nodes.has_redis ? 1 : 0));
        f.target = pick < workers ? worker_node(static_cast<std::int64_t>(pick)) : redis_node();
        break;
      }
      case fault_kind::partition: {
        const std::uint64_t pick = rng.uniform_u64(workers + (nodes.has_redis ? 1 : 0));
        if (!nodes.has_redis)  // a FIFO scenario: the one process's link to the portal (the pick is still drawn)
          f.between = std::make_pair(worker_node(static_cast<std::int64_t>(pick)), node_ref{node_ref::kind::portal, 0});
        else if (pick < workers)
          f.between = std::make_pair(worker_node(static_cast<std::int64_t>(pick)), redis_node());
        else
          f.target = redis_node();
        break;
      }
      case fault_kind::clock_step: {
        f.target = worker_node(static_cast<std::int64_t>(rng.uniform_u64(workers)));
        const vtime_ns magnitude = rng.uniform_i64(1, std::max<vtime_ns>(rates.max_step_ns, 1));
        f.step_ns = rng.uniform_u64(2) == 0 ? magnitude : -magnitude;
        break;
      }
      case fault_kind::redis_restart:
        f.target = redis_node();
        // One of rates.restart_persistence (by default none or aof_everysec, a fair coin: the draw of old).
        ADMIT_ASSERT(!rates.restart_persistence.empty(), "a drawn restart has a persistence to draw from");
        f.persist = rates.restart_persistence[rng.uniform_u64(rates.restart_persistence.size())];
        break;
      case fault_kind::redis_failover:
        f.target = redis_node();
        f.replication_lag_ns = rng.uniform_i64(1, std::max<vtime_ns>(rates.max_replication_lag_ns, 1));
        break;
      default:
        ADMIT_ASSERT(false, "a kind with a rate in fault_kind_table has its draw here");
    }
    // With several Redis nodes, a fault on Redis strikes one drawn from the kind's stream (uniformly), after
    // its target and fields; with one node nothing is drawn, so a one-node scenario's draws are unchanged.
    const bool on_redis = (f.target && f.target->k == node_ref::kind::redis) ||
                          (f.between && f.between->second.k == node_ref::kind::redis);
    if (on_redis && nodes.redis_nodes > 1) f.node = rng.uniform_i64(0, nodes.redis_nodes - 1);
    // Every kind that lasts draws its length last: mean_duration (a drawn crash always restarts).
    if (row.duration != scenario::fault_duration::none) {
      const auto len = draw_length(rng, rates.mean_duration_ns, t, nodes);
      if (!len) continue;
      f.duration_ns = *len;
    }
    out.push_back(f);
    ++drawn;
  }
}

}  // namespace

fault_nodes nodes_of(const scenario::scenario& sc) {
  fault_nodes n;
  n.workers = sc.fleet.workers;
  n.has_redis = std::any_of(sc.gates.begin(), sc.gates.end(),
                            [](const scenario::gate_spec& g) { return g.kind == scenario::gate_kind::lease; });
  n.heal_by_ns = sc.checks.liveness_horizon_ns;
  for (const scenario::gate_spec& g : sc.gates)
    if (g.kind == scenario::gate_kind::lease) n.redis_nodes = g.lease.redis_nodes;
  return n;
}

std::vector<fault_spec> draw_faults(const scenario::fault_rates& rates, const fault_nodes& nodes, std::uint64_t seed,
                                    std::vector<fault_kind>* limited) {
  std::vector<fault_spec> out;
  if (!rates.any()) return out;
  const unsigned world = nodes.has_redis ? check::world_lease : check::world_fifo;
  // Each kind the scenario's world honours, in the table's draw order (the
  // loader refuses a rate above 0 for the others).
  for (const fault_kind k : scenario::fault_rates_draw_order) {
    if (!scenario::applies(scenario::fault_row(k), world)) continue;
    if (!draw_kind(k, rates.per_hour_of(k), rates, nodes, seed, out) && limited != nullptr) limited->push_back(k);
  }
  // Time order; at one instant, kinds in draw order (stable).
  std::stable_sort(out.begin(), out.end(), [](const fault_spec& a, const fault_spec& b) { return a.at_ns < b.at_ns; });
  return out;
}

void merge_faults(std::vector<fault_spec>& schedule, const std::vector<fault_spec>& drawn) {
  std::stable_sort(schedule.begin(), schedule.end(),
                   [](const fault_spec& a, const fault_spec& b) { return a.at_ns < b.at_ns; });
  std::vector<fault_spec> merged;
  merged.reserve(schedule.size() + drawn.size());
  std::merge(schedule.begin(), schedule.end(), drawn.begin(), drawn.end(), std::back_inserter(merged),
             [](const fault_spec& a, const fault_spec& b) { return a.at_ns < b.at_ns; });
  schedule = std::move(merged);
}

scenario::scenario with_drawn_faults(const scenario::scenario& sc, std::uint64_t seed) {
  scenario::scenario out = sc;
  if (!sc.faults.rates) return out;
  const scenario::fault_rates rates = *sc.faults.rates;
  out.faults.rates.reset();
  merge_faults(out.faults.schedule, draw_faults(rates, nodes_of(sc), seed, &out.faults.draw_limited));
  return out;
}

}  // namespace admit::world
