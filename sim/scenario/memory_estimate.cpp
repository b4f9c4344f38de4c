#include "sim/scenario/memory_estimate.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "sim/scenario/json_path_error.hpp"

namespace admit::scenario {

namespace {

// Bytes per unit, measured with `/usr/bin/time -f %M` on admitsim run and
// check (docs/scenarios.md, "Limits") and rounded up.
constexpr std::uint64_t per_fifo_request = 1024;     // a request in flight or waiting: 0.8 KiB measured
constexpr std::uint64_t per_log_entry = 64;          // fifo::event, 48 bytes, in a ring
constexpr std::uint64_t per_explicit_request = 1024; // text, two parsed documents, request_spec: 0.95 KiB measured
constexpr std::uint64_t per_queued_item = 64;        // a lease world's work_item waiting for a worker
constexpr std::uint64_t per_worker = 4096;           // worker state, lease client, coroutine frames: 3.7 KiB measured busy, 1.4 KiB idle
constexpr std::uint64_t per_clock_override = 64;
constexpr std::uint64_t per_lease_member = 128;      // a member of the gate's sorted set, and its token
constexpr std::uint64_t per_trace_entry = 256;       // an entry of the bounded trace, its text included
constexpr std::uint64_t per_fault = 256;             // a fault of the schedule, its timeline window

// a * b, saturating (counts are bounded, but their products need not fit).
std::uint64_t times(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}
std::uint64_t plus(std::uint64_t a, std::uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

std::string gb(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(std::uint64_t{1} << 30));
  return buf;
}

class accumulator {
 public:
  void add(std::uint64_t bytes, std::string path) {
    est_.bytes = plus(est_.bytes, bytes);
    if (bytes > est_.biggest_bytes) {
      est_.biggest_bytes = bytes;
      est_.biggest_path = std::move(path);
    }
  }
  memory_estimate result() const { return est_; }

 private:
  memory_estimate est_;
};

}  // namespace

memory_estimate estimate_memory(const scenario& sc, const nlohmann::ordered_json& doc) {
  accumulator acc;
  const bool one_gate = doc.is_object() && doc.contains("gate");
  auto gate_path = [&](std::size_t i, const char* field) {
    return (one_gate ? std::string("/gate/") : "/gates/" + std::to_string(i) + "/") + field;
  };

  // Requests per gate: what its queue and its workers can hold at most.
  std::vector<std::uint64_t> requests(sc.gates.size(), 0);
  for (const request_spec& r : sc.requests)
    if (r.gate_index < requests.size()) ++requests[r.gate_index];
  for (const arrival_spec& a : sc.arrivals)
    if (a.gate_index < requests.size()) requests[a.gate_index] = plus(requests[a.gate_index], static_cast<std::uint64_t>(a.count));
  // A gate's biggest generator names the path when its requests dominate.
  auto count_path = [&](std::size_t gi) -> std::string {
    std::uint64_t most = 0;
    std::string path = "/workload/requests";
    std::uint64_t explicit_here = 0;
    for (const request_spec& r : sc.requests) explicit_here += r.gate_index == gi;
    most = explicit_here;
    for (std::size_t k = 0; k < sc.arrivals.size(); ++k)
      if (sc.arrivals[k].gate_index == gi && static_cast<std::uint64_t>(sc.arrivals[k].count) > most) {
        most = static_cast<std::uint64_t>(sc.arrivals[k].count);
        path = "/workload/arrivals/" + std::to_string(k) + "/count";
      }
    return path;
  };

  for (std::size_t i = 0; i < sc.gates.size(); ++i) {
    const gate_spec& g = sc.gates[i];
    if (g.kind == gate_kind::fifo) {
      // A request lives while it is active or waiting; beyond max_waiting it is refused at once.
      const std::uint64_t places =
          static_cast<std::uint64_t>(g.fifo.max_active) + static_cast<std::uint64_t>(g.fifo.max_waiting);
      const std::uint64_t held = std::min(places, requests[i]);
      acc.add(times(held, per_fifo_request),
              held < places ? count_path(i)
              : g.fifo.max_waiting >= g.fifo.max_active ? gate_path(i, "max_waiting")
                                                        : gate_path(i, "max_active"));
      acc.add(times(static_cast<std::uint64_t>(g.fifo.event_log_capacity), per_log_entry), gate_path(i, "event_log"));
    } else {
      // The fleet's queue holds every item no worker has taken yet: at worst all of them.
      acc.add(times(requests[i], per_queued_item), count_path(i));
      acc.add(times(static_cast<std::uint64_t>(g.lease.limit), per_lease_member), gate_path(i, "limit"));
    }
  }
  const bool has_lease = std::any_of(sc.gates.begin(), sc.gates.end(), [](const gate_spec& g) { return g.kind == gate_kind::lease; });
  if (has_lease) {
    acc.add(times(static_cast<std::uint64_t>(sc.fleet.workers), per_worker), "/fleet/workers");
    acc.add(times(sc.fleet.clocks.size(), per_clock_override), "/fleet/clocks");
  }
  acc.add(times(sc.requests.size(), per_explicit_request), "/workload/requests");
  acc.add(times(static_cast<std::uint64_t>(sc.checks.trace_capacity), per_trace_entry), "/checks/trace");
  acc.add(times(sc.faults.schedule.size(), per_fault), "/faults/schedule");
  return acc.result();
}

void check_memory_estimate(const scenario& sc, const nlohmann::ordered_json& doc) {
  const memory_estimate e = estimate_memory(sc, doc);
  if (e.bytes <= memory_limit_bytes) return;
  throw scenario_error("/", "expected a scenario whose worst case fits in " + std::to_string(memory_limit_bytes >> 30) +
                                " GiB, got about " + gb(e.bytes) + ", mostly " + e.biggest_path);
}

}  // namespace admit::scenario
