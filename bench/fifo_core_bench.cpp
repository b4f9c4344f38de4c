// fifo_core_bench: operations per second of the sans-IO FIFO gate core.
//
// Method. A driver feeds the core a stream of inputs chosen from a fixed
// table of random words (drawn once from a seeded prng, so every run feeds
// the same stream): half the steps are an acquire, a quarter a release of
// one active lease (plus the claim of the ticket it promotes), a quarter
// expire the waiters whose deadline has passed. Time moves by a random step
// sized so that a full queue's wait is about 1.25 wait deadlines: the queue
// stays full, and admitted, queued, promoted, queue_full and wait_timeout
// all occur. Every call into the core (acquire, release, claim, expire) is
// one item. Two sizes: the issue-6 workload's 8 active / 32 waiting, and
// 4096 / 8192 to show the core's cost does not grow with its caps.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "bench/bench_main.hpp"
#include "gate/fifo/fifo_gate.hpp"
#include "sim/kernel/prng.hpp"

namespace {

using admit::fifo::fifo_gate;

constexpr std::int64_t batch = 1 << 14;  // driver steps per benchmark iteration

void BM_fifo_core_mixed(benchmark::State& state) {
  admit::fifo::config cfg;
  cfg.max_active = state.range(0);
  cfg.max_waiting = state.range(1);
  cfg.wait_deadline_ns = 5'000'000'000;
  fifo_gate gate(cfg);

  constexpr std::size_t words_size = 1 << 16;  // a power of two
  std::vector<std::uint64_t> words(words_size);
  admit::sim::prng rng(20240602);
  for (auto& w : words) w = rng.next_u64();
  // A queued ticket waits about 4 * max_waiting steps (a quarter of steps
  // release); make that 1.25 deadlines on average.
  const std::int64_t step_max_ns = 2 * (cfg.wait_deadline_ns * 5 / 4) / (4 * cfg.max_waiting);

  std::int64_t now_ns = 0;
  admit::fifo::ticket_id next_ticket = 1;
  std::size_t k = 0;
  std::int64_t ops = 0;
  for (auto _ : state) {
    for (std::int64_t step = 0; step < batch; ++step) {
      const std::uint64_t w = words[k++ & (words_size - 1)];
      now_ns += static_cast<std::int64_t>((w >> 8) % static_cast<std::uint64_t>(step_max_ns + 1));
      switch (w & 3) {
        case 0:
        case 1:
          gate.acquire(next_ticket++, now_ns);
          ++ops;
          break;
        case 2:
          if (gate.active() > 0) {
            const admit::fifo::release_result r = gate.release(now_ns);
            ++ops;
            if (r.promoted) {
              gate.claim(*r.promoted, now_ns);
              ++ops;
            }
          }
          break;
        default:
          ops += static_cast<std::int64_t>(gate.expire_due(now_ns, [](admit::fifo::ticket_id) {})) + 1;
          break;
      }
    }
  }
  state.SetItemsProcessed(ops);
  const admit::fifo::counters& c = gate.totals();
  state.counters["admitted"] = static_cast<double>(c.admitted);
  state.counters["promoted"] = static_cast<double>(c.promoted);
  state.counters["queue_full"] = static_cast<double>(c.queue_full);
  state.counters["timeout"] = static_cast<double>(c.wait_timeout);
}

// The uncontended path: acquire is admitted, release promotes nobody.
void BM_fifo_core_admit_release(benchmark::State& state) {
  admit::fifo::config cfg;
  cfg.max_active = state.range(0);
  cfg.max_waiting = state.range(1);
  fifo_gate gate(cfg);
  std::int64_t now_ns = 0;
  admit::fifo::ticket_id next_ticket = 1;
  for (auto _ : state) {
    for (std::int64_t step = 0; step < batch; ++step) {
      ++now_ns;
      gate.acquire(next_ticket++, now_ns);
      gate.release(now_ns);
    }
  }
  state.SetItemsProcessed(2 * batch * static_cast<std::int64_t>(state.iterations()));
}

BENCHMARK(BM_fifo_core_mixed)->Args({8, 32})->Args({4096, 8192});
BENCHMARK(BM_fifo_core_admit_release)->Args({8, 32})->Args({4096, 8192});

}  // namespace

int main(int argc, char** argv) { return admit::bench::run_benchmarks(argc, argv, {}); }
