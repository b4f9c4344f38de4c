// parallel_for (sim/explore/parallel_for.hpp). Goal: every task runs once on any number of threads,
// and a failure is reported the same way whatever the threads' timing. Method: tasks that count their
// own slot, and tasks that throw at known indices, repeated to vary the interleaving.
#include <catch2/catch.hpp>

#include "sim/explore/parallel_for.hpp"

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using admit::explore::parallel_for;

TEST_CASE("parallel_for runs every index exactly once, whatever the thread count", "[explore][parallel_for]") {
  for (unsigned jobs : {0u, 1u, 2u, 3u, 64u}) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{200}}) {
      std::vector<int> runs(n, 0);  // each task writes only its own slot
      parallel_for(n, jobs, [&](std::size_t i) { ++runs[i]; });
      for (std::size_t i = 0; i < n; ++i) CHECK(runs[i] == 1);
    }
  }
}

TEST_CASE("parallel_for rethrows the least failing index's exception", "[explore][parallel_for]") {
  // Tasks 5, 9 and every index from 40 on fail; task 5 waits a little first, so that with more than
  // one thread a later index usually throws first. The exception is still task 5's, and every task
  // below it ran.
  for (unsigned jobs : {1u, 2u, 4u}) {
    for (int round = 0; round < 20; ++round) {
      std::vector<int> ran(100, 0);
      std::string what;
      try {
        parallel_for(ran.size(), jobs, [&](std::size_t i) {
          ran[i] = 1;
          if (i == 5) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          if (i == 5 || i == 9 || i >= 40) throw std::runtime_error("task " + std::to_string(i));
        });
      } catch (const std::runtime_error& e) {
        what = e.what();
      }
      CHECK(what == "task 5");
      for (std::size_t i = 0; i < 5; ++i) CHECK(ran[i] == 1);
    }
  }
}
