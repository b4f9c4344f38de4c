// explore_bench: what one seed of `admitsim explore` costs on
// scenarios/bench_explore.json (1,000 Poisson requests, 12 workers, 8
// permits, server_time, crashes and clock steps drawn from rates; nothing
// breaks, so every seed runs to its end).
//
// BM_explore_seed is one explore::explore_one call per iteration, seeds
// 0, 1, 2, ... in turn: the swarm, the drawn schedule, the world (without a
// timeline or trace, as explore runs it) and the seed's outcome. Its
// items_per_second is seeds per second on one thread; `--jobs N` runs N such
// threads, so on N free cores the CLI does about N times as many.
//
// BM_lease_run_full runs the same explored scenarios through
// world::run_lease_scenario with everything `admitsim run` records (timeline
// and trace): the difference is what explore saves by not recording them.
// Drawing its schedule is not timed (nor counted in allocs_per_seed).
//
// Counters: time_per_seed (CPU time per seed), events_per_seed (kernel events),
// allocs_per_seed (heap allocations on the benchmark's thread).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "bench/alloc_counter.hpp"
#include "bench/bench_main.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/explore/swarm.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/lease_world.hpp"

#ifndef ADMITSIM_BENCH_EXPLORE_FILE
#error "ADMITSIM_BENCH_EXPLORE_FILE must name scenarios/bench_explore.json (set by bench/CMakeLists.txt)"
#endif

namespace {

namespace explore = admit::explore;
namespace scenario = admit::scenario;

const scenario::scenario& bench_scenario() {
  static const scenario::scenario sc = [] {
    std::ifstream in(ADMITSIM_BENCH_EXPLORE_FILE);
    std::stringstream text;
    text << in.rdbuf();
    return scenario::load_scenario_text(text.str());
  }();
  return sc;
}

void set_counters(benchmark::State& state, std::uint64_t seeds, std::uint64_t events, std::uint64_t allocs) {
  const double n = static_cast<double>(seeds);
  state.SetItemsProcessed(static_cast<std::int64_t>(seeds));
  state.counters["time_per_seed"] = benchmark::Counter(n, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["events_per_seed"] = static_cast<double>(events) / n;
  if (admit::bench::counting_allocations()) state.counters["allocs_per_seed"] = static_cast<double>(allocs) / n;
}

void BM_explore_seed(benchmark::State& state) {
  const scenario::scenario& sc = bench_scenario();
  std::uint64_t seed = 0, events = 0;
  const std::uint64_t allocs_before = admit::bench::allocations_on_this_thread();
  for (auto _ : state) {
    explore::seed_outcome o = explore::explore_one(sc, seed++);
    if (o.error || o.any_violation() || o.runs.empty()) {
      state.SkipWithError("a seed of bench_explore broke an invariant or threw");
      return;
    }
    for (const auto& r : o.runs) events += r.events;
    benchmark::DoNotOptimize(o);
  }
  set_counters(state, seed, events, admit::bench::allocations_on_this_thread() - allocs_before);
}

void BM_lease_run_full(benchmark::State& state) {
  const scenario::scenario& sc = bench_scenario();
  std::uint64_t seed = 0, events = 0, allocs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const explore::explored_scenario e = explore::explore_seed(sc, seed);
    state.ResumeTiming();
    const std::uint64_t allocs_before = admit::bench::allocations_on_this_thread();
    for (admit::redis::variant v : e.sc.gates.front().lease.variants) {
      admit::world::run_record rec = admit::world::run_lease_scenario(e.sc, seed, v);
      events += rec.diagnostics.events;
      benchmark::DoNotOptimize(rec);
    }
    allocs += admit::bench::allocations_on_this_thread() - allocs_before;
    ++seed;
  }
  set_counters(state, seed, events, allocs);
}

BENCHMARK(BM_explore_seed)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_lease_run_full)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) { return admit::bench::run_benchmarks(argc, argv, {}); }
