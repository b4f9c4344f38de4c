// replica_bench: lease script executions per second on the in-memory Redis
// replica, per variant.
//
// Method. One gate key, limit 8, a lease of 15 s and 32 holders' tokens
// (built before timing). Each step runs one script at a server clock that
// advances 50 ms a step: the token whose turn it is releases when it holds a
// permit and acquires when it does not, so about 8 tokens hold at any time
// and the rest are refused (the saturated case the lease world spends its
// time in); every 64th step a holder "crashes" (its release is skipped), so
// acquires also reap. `renewal` renews instead of releasing every 4th turn.
// Every script run (acquire, release or renew) is one item.
//
// BM_replica_zset_churn measures the sorted set underneath: ZADD then ZREM of
// 32 members over a set of about 8.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_main.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/replica.hpp"

namespace {

using admit::redis::variant;

constexpr std::int64_t batch = 1 << 12;  // steps per benchmark iteration

void BM_replica_script(benchmark::State& state) {
  const auto v = static_cast<variant>(state.range(0));
  admit::redis::replica r;
  std::vector<std::string> tokens;
  for (int i = 0; i < 32; ++i) {
    std::string t = "worker-";
    t += std::to_string(i);
    t += "-permit";
    tokens.push_back(std::move(t));
  }
  std::vector<bool> holds(tokens.size(), false);
  std::int64_t now_us = 1'700'000'000'000'000;  // 2023-11-14, a Unix time in microseconds
  std::uint64_t step = 0;
  std::int64_t granted = 0, refused = 0;
  for (auto _ : state) {
    for (std::int64_t i = 0; i < batch; ++i, ++step) {
      now_us += 50'000;
      const std::size_t t = step % tokens.size();
      admit::redis::script_reply rep;
      if (holds[t]) {
        if (step % 64 == 0) {  // a crash: the permit is never released, an acquire reaps it later
          holds[t] = false;
          continue;
        }
        if (admit::redis::has_renew(v) && (step / tokens.size()) % 4 == 1) {
          rep = admit::redis::run_renew(r, v, admit::redis::renew_args{"sos:gate", tokens[t], 15'000}, now_us);
          holds[t] = rep.granted();
        } else {
          rep = admit::redis::run_release(r, v, admit::redis::release_args{"sos:gate", tokens[t]}, now_us);
          holds[t] = false;
        }
      } else {
        admit::redis::acquire_args a;
        a.key = "sos:gate";
        a.token = tokens[t];
        a.now_ms = now_us / 1000;
        a.lease_ms = 15'000;
        a.limit = 8;
        a.queue_timeout_ms = 10'000;
        rep = admit::redis::run_acquire(r, v, a, now_us);
        holds[t] = rep.granted();
        (holds[t] ? granted : refused) += 1;
      }
      benchmark::DoNotOptimize(rep);
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * batch);
  state.counters["grant_share"] = granted + refused > 0 ? static_cast<double>(granted) / static_cast<double>(granted + refused) : 0;
  state.SetLabel(std::string(admit::redis::to_string(v)));
}
BENCHMARK(BM_replica_script)->DenseRange(0, static_cast<int>(admit::redis::all_variants.size()) - 1);

void BM_replica_zset_churn(benchmark::State& state) {
  admit::redis::replica r;
  std::vector<std::string> members;
  for (int i = 0; i < 32; ++i) {
    std::string m = "m";
    m += std::to_string(i);
    members.push_back(std::move(m));
  }
  const std::int64_t now_us = 1'700'000'000'000'000;
  std::uint64_t step = 0;
  for (auto _ : state) {
    for (std::int64_t i = 0; i < batch; ++i, ++step) {
      const std::string& add = members[step % members.size()];
      const std::string& rem = members[(step + members.size() - 8) % members.size()];
      benchmark::DoNotOptimize(r.zadd("z", static_cast<double>(step), add, now_us));
      benchmark::DoNotOptimize(r.zrem("z", rem, now_us));
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * batch * 2);
}
BENCHMARK(BM_replica_zset_churn);

}  // namespace

int main(int argc, char** argv) { return admit::bench::run_benchmarks(argc, argv, {}); }
