// kernel_bench: the simulation kernel's event rates next to a bare heap loop.
//
// Method. Every benchmark keeps N waits pending at all times: whenever one
// completes, its handler arms the next one at now + a delay taken from one
// fixed table (uniform 1 us .. 10 ms, drawn once from a seeded prng), so the
// due times are spread out and the heap really reorders. One benchmark
// iteration runs `batch` completions. The bare loop does the same with the
// least machinery possible: a std::vector min-heap of
// (time, seq, std::function<void()>) whose callback pushes its successor.
// Both run in the same process, and bench_main prints each kernel rate
// divided by the bare loop's rate for the same N.
//
// items_per_second is completed waits (or events) per wall-clock second.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "bench/alloc_counter.hpp"
#include "bench/bench_main.hpp"
#include "sim/kernel/awaitable.hpp"
#include "sim/kernel/distribution.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/kernel/sim_timer.hpp"

namespace {

namespace asio = boost::asio;
using admit::sim::vtime_ns;

constexpr std::int64_t batch = 1 << 14;  // completions per benchmark iteration

// The fixed sequence of delays every benchmark draws from, in order.
class delay_table {
 public:
  delay_table() : delays_(size) {
    admit::sim::prng rng(20240601);
    for (auto& d : delays_) d = admit::sim::uniform_ns(rng, 1 * admit::sim::us, 10 * admit::sim::ms);
  }
  vtime_ns next() noexcept { return delays_[next_++ & (size - 1)]; }

 private:
  static constexpr std::size_t size = 4096;  // a power of two
  std::vector<vtime_ns> delays_;
  std::size_t next_ = 0;
};

// Counts the heap allocations made while the timed loop runs.
class alloc_meter {
 public:
  alloc_meter() : start_(admit::bench::allocations_on_this_thread()) {}
  std::uint64_t since_start() const { return admit::bench::allocations_on_this_thread() - start_; }

 private:
  std::uint64_t start_;
};

void set_rate(benchmark::State& state, std::int64_t items, const alloc_meter& allocs) {
  state.SetItemsProcessed(items);
  state.counters["pending"] = static_cast<double>(state.range(0));
  if (admit::bench::counting_allocations() && items > 0)
    state.counters["allocs_per_item"] = static_cast<double>(allocs.since_start()) / static_cast<double>(items);
}

// --- the reference: a bare (time, seq) heap of std::function -----------------

class bare_loop {
 public:
  void schedule_at(vtime_ns when, std::function<void()> fn) {
    heap_.push_back(entry{when, seq_++, std::move(fn)});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  vtime_ns now() const noexcept { return now_; }
  // Runs up to `max` entries in (time, seq) order.
  void run(std::int64_t max) {
    for (std::int64_t n = 0; n < max && !heap_.empty(); ++n) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      entry e = std::move(heap_.back());
      heap_.pop_back();
      now_ = e.when;
      e.fn();
    }
  }

 private:
  struct entry {
    vtime_ns when;
    std::uint64_t seq;
    std::function<void()> fn;
  };
  static bool later(const entry& a, const entry& b) noexcept {
    return a.when != b.when ? a.when > b.when : a.seq > b.seq;
  }
  std::vector<entry> heap_;
  std::uint64_t seq_ = 0;
  vtime_ns now_ = 0;
};

struct bare_world {
  bare_loop loop;
  delay_table delays;
  std::int64_t fired = 0;
  struct rearm {  // 16 bytes and trivially copyable: std::function keeps it inline
    bare_world* w;
    std::uint32_t i;
    void operator()() const { w->fire(i); }
  };
  void fire(std::uint32_t i) {
    ++fired;
    loop.schedule_at(loop.now() + delays.next(), rearm{this, i});
  }
};

void BM_bare_heap_loop(benchmark::State& state) {
  bare_world w;
  for (std::uint32_t i = 0; i < state.range(0); ++i) w.loop.schedule_at(w.delays.next(), bare_world::rearm{&w, i});
  const alloc_meter allocs;
  for (auto _ : state) w.loop.run(batch);
  set_rate(state, w.fired, allocs);
}

// --- the kernel: sim_timer::async_wait with a callback -----------------------

struct timer_world {
  admit::sim::scheduler sched;  // declared first: outlives the timers
  std::vector<std::unique_ptr<admit::sim::sim_timer>> timers;
  delay_table delays;
  std::int64_t fired = 0;
  struct on_fire {
    timer_world* w;
    std::uint32_t i;
    void operator()(boost::system::error_code ec) const {
      if (!ec) w->fire(i);
    }
  };
  void arm(std::uint32_t i) {
    admit::sim::sim_timer& t = *timers[i];
    t.expires_at(sched.now_ns() + delays.next());
    t.async_wait(on_fire{this, i});
  }
  void fire(std::uint32_t i) {
    ++fired;
    arm(i);
  }
};

void BM_kernel_timer_wait_callback(benchmark::State& state) {
  timer_world w;
  for (std::uint32_t i = 0; i < state.range(0); ++i) {
    w.timers.push_back(std::make_unique<admit::sim::sim_timer>(w.sched));
    w.arm(i);
  }
  const alloc_meter allocs;
  for (auto _ : state) w.sched.run(admit::sim::run_limits{static_cast<std::uint64_t>(batch)});
  set_rate(state, w.fired, allocs);
}

// --- the kernel: raw scheduler::schedule_at ---------------------------------

struct schedule_world {
  admit::sim::scheduler sched;
  delay_table delays;
  std::int64_t fired = 0;
  struct task {
    schedule_world* w;
    void operator()() const { w->fire(); }
  };
  void fire() {
    ++fired;
    sched.schedule_at(sched.now_ns() + delays.next(), task{this});
  }
};

void BM_kernel_schedule_at(benchmark::State& state) {
  schedule_world w;
  for (std::int64_t i = 0; i < state.range(0); ++i) w.sched.schedule_at(w.delays.next(), schedule_world::task{&w});
  const alloc_meter allocs;
  for (auto _ : state) w.sched.run(admit::sim::run_limits{static_cast<std::uint64_t>(batch)});
  set_rate(state, w.fired, allocs);
}

// --- the kernel: scheduler::post (the ready queue) ---------------------------

struct post_world {
  admit::sim::scheduler sched;
  std::int64_t fired = 0;
  struct task {
    post_world* w;
    void operator()() const {
      ++w->fired;
      w->sched.post(task{w});
    }
  };
};

void BM_kernel_post(benchmark::State& state) {
  post_world w;
  for (std::int64_t i = 0; i < state.range(0); ++i) w.sched.post(post_world::task{&w});
  const alloc_meter allocs;
  for (auto _ : state) w.sched.run(admit::sim::run_limits{static_cast<std::uint64_t>(batch)});
  set_rate(state, w.fired, allocs);
}

// --- the kernel: coroutine actors --------------------------------------------

struct coro_world {
  admit::sim::scheduler sched;
  delay_table delays;
  std::int64_t fired = 0;
};

// One sim_timer per actor, re-armed for every wait.
admit::sim::awaitable<void> timer_actor(coro_world& w) {
  admit::sim::sim_timer t(co_await asio::this_coro::executor);
  for (;;) {
    t.expires_after(w.delays.next());
    co_await t.async_wait(admit::sim::use_awaitable);
    ++w.fired;
  }
}

// sim::sleep_for: a nested awaitable and a fresh timer for every wait.
admit::sim::awaitable<void> sleep_actor(coro_world& w) {
  for (;;) {
    co_await admit::sim::sleep_for(w.delays.next());
    ++w.fired;
  }
}

// A short-lived actor per item, as the world spawns one per request: wait
// once, then spawn a successor (so `pending` actors are always alive).
admit::sim::awaitable<void> one_shot_actor(coro_world& w) {
  admit::sim::sim_timer t(co_await asio::this_coro::executor);
  t.expires_after(w.delays.next());
  co_await t.async_wait(admit::sim::use_awaitable);
  ++w.fired;
  asio::co_spawn(w.sched.get_executor(), one_shot_actor(w), asio::detached);
}

template <admit::sim::awaitable<void> (*Actor)(coro_world&)>
void run_coroutines(benchmark::State& state) {
  coro_world w;
  for (std::int64_t i = 0; i < state.range(0); ++i) asio::co_spawn(w.sched.get_executor(), Actor(w), asio::detached);
  w.sched.run(admit::sim::run_limits{static_cast<std::uint64_t>(state.range(0))});  // start them all
  w.fired = 0;
  const alloc_meter allocs;
  for (auto _ : state) w.sched.run(admit::sim::run_limits{static_cast<std::uint64_t>(batch)});
  set_rate(state, w.fired, allocs);
  w.sched.shutdown();  // destroys the suspended actors while `w` is whole
}

void BM_kernel_coroutine_timer_wait(benchmark::State& state) { run_coroutines<timer_actor>(state); }
void BM_kernel_coroutine_sleep_for(benchmark::State& state) { run_coroutines<sleep_actor>(state); }
void BM_kernel_coroutine_spawn(benchmark::State& state) { run_coroutines<one_shot_actor>(state); }

// N pending waits: 64 is about what the issue-6 workload keeps pending (8
// service timers, up to 32 deadlines, arrivals); 4096 and 65536 show how the
// heap scales once it leaves the first cache levels.
#define ADMITSIM_PENDING_ARGS Arg(64)->Arg(4096)->Arg(65536)

BENCHMARK(BM_bare_heap_loop)->ADMITSIM_PENDING_ARGS;
BENCHMARK(BM_kernel_timer_wait_callback)->ADMITSIM_PENDING_ARGS;
BENCHMARK(BM_kernel_schedule_at)->ADMITSIM_PENDING_ARGS;
BENCHMARK(BM_kernel_post)->Arg(1)->Arg(64);
BENCHMARK(BM_kernel_coroutine_timer_wait)->ADMITSIM_PENDING_ARGS;
BENCHMARK(BM_kernel_coroutine_sleep_for)->ADMITSIM_PENDING_ARGS;
BENCHMARK(BM_kernel_coroutine_spawn)->ADMITSIM_PENDING_ARGS;

}  // namespace

int main(int argc, char** argv) {
  return admit::bench::run_benchmarks(argc, argv,
                                      {{"BM_kernel_timer_wait_callback", "BM_bare_heap_loop"},
                                       {"BM_kernel_schedule_at", "BM_bare_heap_loop"},
                                       {"BM_kernel_coroutine_timer_wait", "BM_bare_heap_loop"},
                                       {"BM_kernel_coroutine_sleep_for", "BM_bare_heap_loop"},
                                       {"BM_kernel_coroutine_spawn", "BM_bare_heap_loop"}});
}
