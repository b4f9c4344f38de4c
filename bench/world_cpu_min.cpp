// world_cpu_min: nanoseconds of CPU per simulated request, the least of N runs.
//
// Why a second tool beside world_bench. On a shared machine the time a run
// takes varies with what the neighbours do to the caches, by 30% or more
// between runs; the fastest of many runs of the same work is the stable
// figure, and the one to compare two builds by (run both, alternately, in
// one session). It times admit::world::run_scenario alone (the scenario is
// built first) with the calling thread's CPU clock; that clock is read only
// here, outside the simulation.
//
// Usage: world_cpu_min [REQUESTS=100000] [RUNS=15] [explicit|generated]
// Prints the minimum and median ns per request over the runs and the
// requests per second the minimum means. Exits 1 if a run does not end idle
// without violations after simulating every request.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "bench/issue6_workload.hpp"
#include "sim/world/world.hpp"

namespace {

double thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  const long requests = argc > 1 ? std::atol(argv[1]) : 100'000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 15;
  const std::string mode = argc > 3 ? argv[3] : "explicit";
  if (requests < 1 || runs < 1 || (mode != "explicit" && mode != "generated")) {
    std::fprintf(stderr, "usage: world_cpu_min [REQUESTS] [RUNS] [explicit|generated]\n");
    return 2;
  }
  const admit::scenario::scenario sc = mode == "explicit" ? admit::bench::make_issue6_workload(requests, 1)
                                                          : admit::bench::make_issue6_generated(requests, 1);
  std::vector<double> ns_per_request;
  for (int i = 0; i < runs; ++i) {
    const double t0 = thread_cpu_ns();
    const admit::world::run_record rec = admit::world::run_scenario(sc, sc.seed);
    const double t1 = thread_cpu_ns();
    if (rec.any_violation() || rec.status != admit::sim::run_status::idle ||
        rec.metrics.requests != static_cast<std::uint64_t>(requests)) {
      std::fprintf(stderr, "world_cpu_min: the run did not simulate every request cleanly (seed %llu)\n",
                   static_cast<unsigned long long>(sc.seed));
      return 1;
    }
    ns_per_request.push_back((t1 - t0) / static_cast<double>(requests));
  }
  std::sort(ns_per_request.begin(), ns_per_request.end());
  const double best = ns_per_request.front();
  std::printf("%s %ld requests, %d runs: ns/request min %.0f median %.0f -> %.0f requests/s (min), %.1fx the 22k/s Python baseline\n",
              mode.c_str(), requests, runs, best, ns_per_request[ns_per_request.size() / 2], 1e9 / best,
              1e9 / best / 22'000.0);
  return 0;
}
