// fleet_bench: the lease world's cost per event against the size of its fleet.
//
// Not a Google Benchmark binary: each case is one run to its event budget.
// The workload is the same for every fleet: 200,000 arrivals, a permit limit
// of 8, server_time, and a budget of 1,000,000 kernel events; only the number
// of workers changes.
//   light: an arrival every 10 ms, a portal call of 5 to 50 ms: a few workers
//          busy at once, the rest idle. The idle ones must cost nothing per
//          event (those never used hold no coroutine): events per second
//          within 2x of 10 workers' (exit 1 if not).
//   busy:  an arrival every 10 us, a portal call of 1 to 3 s: every arrival
//          takes a new worker, which polls for a permit until its acquire
//          timeout (30 s), so with 100,000 workers about 94,000 are busy at
//          once. Waking one used to scan the busy ones first (16.7 s for the
//          run). What is left grows with the number of *busy* workers, as
//          any simulation's of one coroutine per actor does: each event wakes
//          a suspended chain whose memory is no longer in a cache (reported,
//          not judged; bench/actor_floor measures that floor alone).
//
// Usage: fleet_bench [light|busy] [WORKERS...]   (default: light 10 1000 100000)
// Prints, per fleet, the run's events, its CPU time (the process clock, read
// here only, outside the simulation) and the part of it spent building and
// tearing down the fleet (a run of one event), events per CPU second and the
// ratio to the first fleet's rate; then the same rate with the one-event
// run's time taken out (the fleet's construction and the teardown of an idle
// fleet; the teardown of the busy workers' frames stays in). The check of the
// light workload uses the first rate, construction included.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "sim/scenario/loader.hpp"
#include "sim/world/lease_world.hpp"

namespace {

double cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::string fleet_scenario(bool busy, long workers, long max_events) {
  return R"({"name": "fleet_bench", "seed": 1,
  "gate": {"kind": "lease", "variant": "server_time", "limit": 8, "lease": "15s", "acquire_timeout": "30s"},
  "fleet": {"workers": )" + std::to_string(workers) + R"(},
  "service": {"service_time": {"kind": "uniform", )" +
         (busy ? R"("min": "1s", "max": "3s")" : R"("min": "5ms", "max": "50ms")") + R"(}},
  "workload": {"arrivals": [{"kind": "constant", "count": 200000, "every": ")" + (busy ? "10us" : "10ms") + R"("}]},
  "checks": {"max_events": )" + std::to_string(max_events) + R"(, "horizon": "30h"}})";
}

}  // namespace

int main(int argc, char** argv) {
  int arg = 1;
  const std::string mode = argc > 1 && !std::isdigit(static_cast<unsigned char>(argv[1][0])) ? argv[arg++] : "light";
  if (mode != "light" && mode != "busy") {
    std::fprintf(stderr, "usage: fleet_bench [light|busy] [WORKERS...]\n");
    return 2;
  }
  const bool busy = mode == "busy";
  std::vector<long> fleets;
  for (int i = arg; i < argc; ++i) fleets.push_back(std::atol(argv[i]));
  if (fleets.empty()) fleets = {10, 1'000, 100'000};
  double first_rate = 0;
  double first_rate_unbuilt = 0;
  bool ok = true;
  for (const long n : fleets) {
    admit::world::lease_run_options opts;  // explore's verdict-only runs
    opts.timeline = false;
    opts.trace = false;
    auto timed_run = [&](long max_events, admit::world::run_record& rec) {
      const admit::scenario::scenario sc = admit::scenario::load_scenario_text(fleet_scenario(busy, n, max_events));
      const double t0 = cpu_s();
      rec = admit::world::run_lease_scenario(sc, sc.seed, sc.gates.front().lease.variants.front(), opts);
      return cpu_s() - t0;
    };
    admit::world::run_record rec;
    const double t = timed_run(1'000'000, rec);
    admit::world::run_record setup_rec;
    const double setup = timed_run(1, setup_rec);  // building and tearing down the fleet, one event
    const double rate = static_cast<double>(rec.diagnostics.events) / t;
    const double rate_unbuilt = static_cast<double>(rec.diagnostics.events) / (t - setup);
    if (first_rate == 0) first_rate = rate;
    if (first_rate_unbuilt == 0) first_rate_unbuilt = rate_unbuilt;
    const bool within = busy || rate * 2 >= first_rate;
    ok = ok && within;
    std::printf("%7ld workers: %8llu events, %7llu requests, cpu %6.3f s (of which building the fleet %.3f s), "
                "%5.2f M events/s, %.2fx the first%s; without building the fleet %5.2f M events/s, %.2fx\n",
                n, static_cast<unsigned long long>(rec.diagnostics.events),
                static_cast<unsigned long long>(rec.metrics.requests), t, setup, rate / 1e6, rate / first_rate,
                within ? "" : "  (below half: MISSED)", rate_unbuilt / 1e6, rate_unbuilt / first_rate_unbuilt);
  }
  return ok ? 0 : 1;
}
