// actor_floor: what any world built of one coroutine per busy actor pays for
// the number of actors, apart from what the actors do.
//
// N actors on the kernel, each a coroutine that sleeps a drawn time (1 ms to
// 3 s, one seeded stream for all) and, at each wake, reads and writes PAD
// bytes of its own frame (every 64th byte: one touch per cache line), the
// way a lease-world worker's client touches its frames at each poll. Every
// event is one actor's wake-up; the run stops after 1,000,000 of them. With
// 10 actors everything stays in cache; with 100,000 every wake-up reaches
// memory no other recent event touched. The lease world's busy fleet
// (fleet_bench busy) is this and its work; this is its floor.
//
// Usage: actor_floor [PAD] [ACTORS...]   (PAD in 0, 256, 1024, 3072; default 0; actors default 10 100000)
// Prints, per fleet, the CPU time of building it, of the run and of the
// teardown, the events per CPU second of the whole, and the ratio to the
// first fleet's.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "sim/kernel/awaitable.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/kernel/sim_timer.hpp"

namespace {

using namespace admit;

double cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

template <std::size_t Pad>
sim::awaitable<void> actor(sim::prng& draws, std::uint64_t& sum) {
  // The frame's own bytes, touched at every wake (volatile: the compiler keeps each touch).
  volatile unsigned char pad[Pad == 0 ? 1 : Pad];
  for (std::size_t i = 0; i < Pad; i += 64) pad[i] = 0;
  sim::sim_timer t(co_await boost::asio::this_coro::executor);
  for (;;) {
    t.expires_after(1'000'000 + static_cast<sim::vtime_ns>(draws.uniform_u64(3'000'000'000ULL)));
    co_await t.async_wait(sim::use_awaitable);
    for (std::size_t i = 0; i < Pad; i += 64) {
      pad[i] = static_cast<unsigned char>(pad[i] + 1);
      sum += pad[i];
    }
  }
}

template <std::size_t Pad>
void run(const std::vector<long>& fleets) {
  double first = 0;
  for (const long n : fleets) {
    std::uint64_t sum = 0;
    sim::prng draws(1);
    double t0 = cpu_s();
    double built = 0;
    double ran = 0;
    std::uint64_t events = 0;
    {
      sim::scheduler sched;
      for (long i = 0; i < n; ++i)
        boost::asio::co_spawn(sched.get_executor(), actor<Pad>(draws, sum), boost::asio::detached);
      built = cpu_s() - t0;
      t0 = cpu_s();
      sim::run_limits lim;
      lim.max_events = 1'000'000 + static_cast<std::uint64_t>(n);  // each actor's first step, then 1,000,000 wakes
      (void)sched.run(lim);
      events = sched.events_run();
      ran = cpu_s() - t0;
      t0 = cpu_s();
      sched.shutdown();
    }
    const double torn = cpu_s() - t0;
    const double total = built + ran + torn;
    const double rate = static_cast<double>(events) / total;
    if (first == 0) first = rate;
    std::printf("%7ld actors, %4zu bytes touched a wake: %8llu events, cpu %.3f s (build %.3f, run %.3f, teardown %.3f), "
                "%5.2f M events/s, %.2fx the first (checksum %llu)\n",
                n, Pad, static_cast<unsigned long long>(events), total, built, ran, torn, rate / 1e6, rate / first,
                static_cast<unsigned long long>(sum % 1000));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const long pad = argc > 1 ? std::atol(argv[1]) : 0;
  std::vector<long> fleets;
  for (int i = 2; i < argc; ++i) fleets.push_back(std::atol(argv[i]));
  if (fleets.empty()) fleets = {10, 100'000};
  for (const long n : fleets)
    if (n < 1 || n > 10'000'000) {
      std::fprintf(stderr, "actor_floor: actors must be 1 .. 10000000\n");
      return 2;
    }
  switch (pad) {
    case 0: run<0>(fleets); break;
    case 256: run<256>(fleets); break;
    case 1024: run<1024>(fleets); break;
    case 3072: run<3072>(fleets); break;
    default: std::fprintf(stderr, "usage: actor_floor [0|256|1024|3072] [ACTORS...]\n"); return 2;
  }
  return 0;
}
