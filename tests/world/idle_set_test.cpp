// Tests of sim/world/idle_set, the lease world's set of idle workers: it must
// name the worker the old scan of the fleet named (the least idle index), or
// every lease report would change.
#include <catch2/catch.hpp>
#include <cstddef>
#include <set>

#include "sim/kernel/prng.hpp"
#include "sim/world/idle_set.hpp"

using admit::world::idle_set;

TEST_CASE("idle_set finds the least member at or after an index, as a scan of a sorted set does") {
  // Goal: next() is the scan's pick after any sequence of inserts and erases. Method: random operations on sizes that
  // end inside a word, on a word's edge and across three levels, against std::set; compare next() from random points.
  for (const std::size_t n : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65}, std::size_t{4097},
                              std::size_t{100'000}}) {
    CAPTURE(n);
    idle_set s(n);
    std::set<std::size_t> model;
    admit::sim::prng rng(n);
    CHECK(s.empty());
    CHECK(s.next() == idle_set::npos);
    for (int step = 0; step < 20'000; ++step) {
      const auto i = static_cast<std::size_t>(rng.uniform_u64(n));
      if (rng.uniform_u64(3) == 0) {
        s.erase(i);
        model.erase(i);
      } else {
        s.insert(i);
        model.insert(i);
      }
      const auto from = static_cast<std::size_t>(rng.uniform_u64(n + 1));
      const auto it = model.lower_bound(from);
      REQUIRE(s.next(from) == (it == model.end() ? idle_set::npos : *it));
      REQUIRE(s.next() == (model.empty() ? idle_set::npos : *model.begin()));
      REQUIRE(s.contains(i) == (model.count(i) == 1));
      REQUIRE(s.empty() == model.empty());
    }
    for (const std::size_t i : std::set<std::size_t>(model)) {
      s.erase(i);
      model.erase(i);
      REQUIRE(s.next() == (model.empty() ? idle_set::npos : *model.begin()));
    }
    CHECK(s.empty());
  }
}
