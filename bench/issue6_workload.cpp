#include "bench/issue6_workload.hpp"

#include <string>
#include <utility>

#include "sim/kernel/distribution.hpp"
#include "sim/kernel/prng.hpp"

namespace admit::bench {

namespace {

// The issue-6 gate (max_active 8, max_waiting 32, wait deadline 5 s), no requests yet.
scenario::scenario issue6_gate(const char* name, std::uint64_t seed) {
  scenario::scenario sc;
  sc.name = name;
  sc.seed = seed;
  scenario::gate_spec g;
  g.name = "gate";
  g.fifo.max_active = 8;
  g.fifo.max_waiting = 32;
  g.fifo.wait_deadline_ns = 5 * sim::sec;
  sc.gates.push_back(g);
  return sc;
}

}  // namespace

scenario::scenario make_issue6_workload(std::int64_t requests, std::uint64_t seed) {
  scenario::scenario sc = issue6_gate("bench_fifo_issue6", seed);
  sim::prng gaps = sim::substream(seed, "arrivals");
  sim::prng services = sim::substream(seed, "service");
  sc.requests.reserve(static_cast<std::size_t>(requests));
  sim::vtime_ns at_ns = 0;
  for (std::int64_t i = 0; i < requests; ++i) {
    at_ns += sim::exponential_ns(gaps, 100 * sim::ms);
    scenario::request_spec r;
    r.id = std::to_string(i + 1);
    r.id.insert(0, 1, 'r');  // not "r" + ...: g++ 12 warns falsely (-Wrestrict) on that
    r.gate = "gate";
    r.at_ns = at_ns;
    r.service_ns = sim::exponential_ns(services, 700 * sim::ms);
    sc.requests.push_back(std::move(r));
  }
  // Room for the whole run: the default horizon (24 h) and event budget are
  // sized for hand-written scenarios, not for a million requests.
  sc.checks.horizon_ns = at_ns + 3600 * sim::sec;
  sc.checks.max_events = static_cast<std::uint64_t>(requests) * 100 + 1000;
  return sc;
}

scenario::scenario make_issue6_generated(std::int64_t requests, std::uint64_t seed) {
  scenario::scenario sc = issue6_gate("bench_fifo_issue6_generated", seed);
  scenario::arrival_spec a;
  a.kind = scenario::arrival_kind::poisson;
  a.count = requests;
  a.gate = "gate";
  a.gate_index = 0;
  a.mean_gap_ns = 100 * sim::ms;
  a.service = sim::duration_dist::exponential(700 * sim::ms);
  sc.arrivals.push_back(a);
  // Mean gap 100 ms: the last arrival is near requests * 100 ms; leave room.
  sc.checks.horizon_ns = requests * 200 * sim::ms + 3600 * sim::sec;
  sc.checks.max_events = static_cast<std::uint64_t>(requests) * 100 + 1000;
  return sc;
}

}  // namespace admit::bench
