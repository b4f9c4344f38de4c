// lua_bench: the seed acquire's calls per second through its C++ body
// (run_acquire) and through the Lua script engine with a cached script
// (by handle, and by EVALSHA-style lookup), in one run so the ratio is fair.
//
// Method. One gate key, limit 8, a lease of 15 s and 32 tokens (built before
// timing); each step is one acquire at a server clock that advances 50 ms,
// the next token in turn; every 8th step the oldest holder releases, so the
// gate stays saturated and both grants and refusals occur (as in
// replica_bench). Releases are done on the replica directly in both cases
// and are not counted; every acquire is one item. The ratio printed is
// engine / C++ (how much slower the Lua path is).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_main.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/lua_engine.hpp"
#include "gate/redis/replica.hpp"

namespace {

using admit::redis::variant;

constexpr std::int64_t batch = 1 << 10;  // acquires per benchmark iteration
constexpr std::int64_t t0_us = 1'700'000'000'000'000;

std::vector<std::string> make_tokens() {
  std::vector<std::string> tokens;
  for (int i = 0; i < 32; ++i) tokens.push_back("worker-" + std::to_string(i) + "-permit");
  return tokens;
}

admit::redis::acquire_args args_for(const std::string& token, std::int64_t now_us) {
  admit::redis::acquire_args a;
  a.key = "sos:gate";
  a.token = token;
  a.now_ms = now_us / 1000;
  a.lease_ms = 15'000;
  a.limit = 8;
  return a;
}

// engine_twin: EVALSHA of the shipped script with the engine's native twins on (the C++ body inside the
// engine, gate/redis/native_twins.hpp); the other engine paths run the Lua VM (twins off).
enum class path : std::uint8_t { cpp, engine_handle, engine_evalsha, engine_twin };

void BM_seed_acquire(benchmark::State& state) {
  const auto how = static_cast<path>(state.range(0));
  admit::redis::replica r;
  admit::redis::script_engine engine(r);
  engine.set_native_twins(how == path::engine_twin);
  const std::string body(admit::redis::lua_source(variant::seed, admit::redis::script_op::acquire));
  const admit::redis::script_handle handle = engine.load_handle(body);
  const std::string sha = engine.script_load(body).text;
  const auto tokens = make_tokens();
  std::int64_t now_us = t0_us;
  std::uint64_t step = 0;
  std::int64_t granted = 0;
  for (auto _ : state) {
    for (std::int64_t i = 0; i < batch; ++i, ++step) {
      now_us += 50'000;
      const std::string& token = tokens[step % tokens.size()];
      if (step % 8 == 0) r.zrem("sos:gate", tokens[(step + 24) % tokens.size()], now_us);
      const auto a = args_for(token, now_us);
      std::int64_t value = 0;
      if (how == path::cpp) {
        value = admit::redis::run_acquire(r, variant::seed, a, now_us).value;
      } else {
        const admit::redis::lua_call call = admit::redis::lua_acquire_call(variant::seed, a);
        const admit::redis::reply rep = how == path::engine_handle
                                            ? engine.call(handle, call.keys, call.argv, now_us)
                                            : engine.evalsha(sha, call.keys, call.argv, now_us);
        value = rep.integer;
      }
      granted += value;
      benchmark::DoNotOptimize(value);
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * batch);
  state.counters["grant_share"] = step > 0 ? static_cast<double>(granted) / static_cast<double>(step) : 0;
  state.SetLabel(how == path::cpp             ? "run_acquire"
                 : how == path::engine_handle ? "engine call(handle)"
                 : how == path::engine_evalsha ? "engine evalsha"
                                               : "engine evalsha, native twin");
}
BENCHMARK(BM_seed_acquire)->Arg(0)->Arg(1)->Arg(2)->Arg(3);

}  // namespace

int main(int argc, char** argv) { return admit::bench::run_benchmarks(argc, argv, {}); }
