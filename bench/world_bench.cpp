// world_bench: simulated requests per wall-clock second, end to end.
//
// Method. The issue-6 workload: one FIFO gate with max_active 8,
// max_waiting 32 and a 5 s wait deadline; arrivals with exponential gaps of
// mean 100 ms; exponential service times of mean 700 ms (offered load 7 of
// 8 slots, so the queue fills and some waiters time out). Each iteration is
// one admit::world::run_scenario call: the actors, the adapter, the core,
// the monitors and the run record, everything the CLI's run does except
// parsing the file and writing the report.
//
// Two ways to state the requests. BM_world_fifo_issue6 lists them
// explicitly (request_spec entries, ids "r1"...), built once before timing
// from sim::prng streams: this path holds the whole request list in memory
// up front (about 100 bytes per request), and building it is not timed.
// BM_world_fifo_issue6_generated uses a Poisson arrivals generator with the
// same means, which the world draws lazily while it runs (its draws are part
// of the time); memory does not grow with the number of requests.
//
// Counters: items_per_second is simulated requests per second;
// x_python_22k divides it by the Python asyncio baseline of issue 6 (22,000
// simulated requests per second); events_per_second counts kernel events;
// allocs_per_request counts heap allocations (malloc and friends) during the
// runs, divided by the requests simulated.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "bench/alloc_counter.hpp"
#include "bench/bench_main.hpp"
#include "bench/issue6_workload.hpp"
#include "sim/kernel/distribution.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/world.hpp"

namespace {

namespace sim = admit::sim;
namespace scenario = admit::scenario;

constexpr double python_baseline_requests_per_s = 22'000.0;

void run_world(benchmark::State& state, const scenario::scenario& sc) {
  std::uint64_t events = 0;
  std::int64_t simulated_ns = 0;
  const std::uint64_t allocs_before = admit::bench::allocations_on_this_thread();
  for (auto _ : state) {
    admit::world::run_record rec = admit::world::run_scenario(sc, sc.seed);
    if (rec.any_violation() || rec.status != sim::run_status::idle) {
      state.SkipWithError("the run did not end idle without violations");
      return;
    }
    if (rec.metrics.requests != static_cast<std::uint64_t>(state.range(0))) {
      state.SkipWithError("the world did not run every request of the scenario");
      return;
    }
    events += rec.diagnostics.events;
    simulated_ns = rec.metrics.simulated_ns;
    benchmark::DoNotOptimize(rec);
  }
  const std::uint64_t allocs = admit::bench::allocations_on_this_thread() - allocs_before;
  const auto iterations = static_cast<double>(state.iterations());
  if (admit::bench::counting_allocations())
    state.counters["allocs_per_request"] = static_cast<double>(allocs) / (iterations * static_cast<double>(state.range(0)));
  state.SetItemsProcessed(state.range(0) * static_cast<std::int64_t>(state.iterations()));
  state.counters["x_python_22k"] = benchmark::Counter(iterations * static_cast<double>(state.range(0)) /
                                                          python_baseline_requests_per_s,
                                                      benchmark::Counter::kIsRate);
  state.counters["events_per_second"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_request"] = static_cast<double>(events) / (iterations * static_cast<double>(state.range(0)));
  state.counters["sim_s_per_wall_s"] =
      benchmark::Counter(iterations * static_cast<double>(simulated_ns) / 1e9, benchmark::Counter::kIsRate);
}

void BM_world_fifo_issue6(benchmark::State& state) {
  run_world(state, admit::bench::make_issue6_workload(state.range(0), 1));
}
void BM_world_fifo_issue6_generated(benchmark::State& state) {
  run_world(state, admit::bench::make_issue6_generated(state.range(0), 1));
}

BENCHMARK(BM_world_fifo_issue6)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_world_fifo_issue6_generated)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) { return admit::bench::run_benchmarks(argc, argv, {}); }
