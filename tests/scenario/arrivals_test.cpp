// Tests for sim/world/arrivals.hpp: exact times per generator kind, the
// merge order, per-request parameters, and memory that does not grow with
// the number of requests.
//
// The golden values come from an independent Python implementation of the
// header's formulas over the same generator (xoshiro256** seeded by
// splitmix64, sub-streams by FNV-1a names, as in tests/kernel/prng_test.cpp),
// run once on this platform. Its core, per generator g of the run seed:
//   rng = substream(seed, "arrivals/<g>")
//   poisson: t = start + expo(rng, mean); then t += expo(rng, mean) per request
//   ramp:    gap_k = from + trunc((to - from) * k / (count - 2))
//   surge:   gap_k = near + trunc((far - near) * clamp(deadline - t_k, 0, R) / R)
// with expo = round_ns(-mean * log(1 - u01())) and Python integers for the
// 128-bit products.
#include "sim/world/arrivals.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/scenario/loader.hpp"

// Every allocation of this test binary is counted, so that a test can show
// that drawing arrivals allocates nothing per request. Every replaceable
// form without an alignment argument is replaced, so that whatever pair the
// library uses (std::stable_sort's buffer takes the nothrow form) allocates
// and frees alike; the aligned forms stay the library's, as a pair.
namespace {
std::size_t allocations = 0;
void* counted_malloc(std::size_t n) noexcept {
  ++allocations;
  return std::malloc(n == 0 ? 1 : n);
}
}  // namespace

void* operator new(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
// GCC pairs an inlined `operator new` with the `free` here and warns of a
// mismatch; these replacements allocate with malloc, so the pair is right.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

using namespace admit;
using admit::scenario::load_scenario_text;
using world::arrival;
using world::arrival_source;

using sim::ms;
using sim::sec;

admit::scenario::scenario with_arrivals(const std::string& generators, const std::string& requests = "") {
  return load_scenario_text(R"({"name": "t", "gate": {"kind": "fifo", "max_active": 1}, "workload": {)" +
                            (requests.empty() ? "" : R"("requests": )" + requests + ", ") + R"("arrivals": )" +
                            generators + "}}");
}

// Every arrival of the stream.
std::vector<arrival> drain(const admit::scenario::scenario& sc, std::uint64_t seed) {
  arrival_source src(sc, seed);
  std::vector<arrival> out;
  while (auto a = src.next()) out.push_back(*a);
  return out;
}

// The times of generator g's requests, in stream order.
std::vector<sim::vtime_ns> times_of(const std::vector<arrival>& all, std::size_t g) {
  std::vector<sim::vtime_ns> t;
  for (const auto& a : all)
    if (a.generator == g) t.push_back(a.at_ns);
  return t;
}

}  // namespace

TEST_CASE("constant, ramp and surge times follow the documented formulas exactly") {
  // Goal: the deterministic kinds' times. Method: small generators against the Python reference's values.
  const auto sc = with_arrivals(R"([
      {"kind": "constant", "count": 5, "start": "250ms", "every": "100ms"},
      {"kind": "ramp", "count": 6, "gap_from": "1s", "gap_to": "0ms"},
      {"kind": "ramp", "count": 5, "gap_from": "10ms", "gap_to": "13000001ns"},
      {"kind": "deadline_surge", "count": 8, "deadline": "10s", "gap_far": "2s", "gap_near": "100ms"},
      {"kind": "ramp", "count": 2, "gap_from": "7ms", "gap_to": "9ms"}])");
  const auto all = drain(sc, 42);
  CHECK(times_of(all, 0) == std::vector<sim::vtime_ns>{250 * ms, 350 * ms, 450 * ms, 550 * ms, 650 * ms});
  // The first gap is gap_from and the last gap_to.
  CHECK(times_of(all, 1) == std::vector<sim::vtime_ns>{0, 1000 * ms, 1750 * ms, 2250 * ms, 2500 * ms, 2500 * ms});
  CHECK(times_of(all, 2) == std::vector<sim::vtime_ns>{0, 10'000'000, 21'000'000, 33'000'000, 46'000'001});
  CHECK(times_of(all, 3) == std::vector<sim::vtime_ns>{0, 2'000'000'000, 3'620'000'000, 4'932'200'000, 5'995'082'000,
                                                       6'856'016'420, 7'553'373'300, 8'118'232'373});
  CHECK(times_of(all, 4) == std::vector<sim::vtime_ns>{0, 7 * ms});  // one gap: gap_from
}

TEST_CASE("poisson times are golden for a fixed seed, per generator sub-stream") {
  // Goal: the Poisson stream is what the seed means. Method: two Poisson generators against the Python reference; the
  // second draws from "arrivals/1" whatever the first does.
  const auto sc = with_arrivals(R"([
      {"kind": "poisson", "count": 8, "start": "1s", "mean_gap": "100ms"},
      {"kind": "poisson", "count": 5, "mean_gap": "100ms"}])");
  const auto all = drain(sc, 42);
  CHECK(times_of(all, 0) == std::vector<sim::vtime_ns>{1'130'722'617, 1'143'992'730, 1'275'847'415, 1'309'469'980,
                                                       1'339'484'904, 1'495'703'519, 1'565'586'886, 1'753'005'613});
  CHECK(times_of(all, 1) ==
        std::vector<sim::vtime_ns>{791'328'488, 1'064'017'906, 1'148'350'424, 1'157'363'464, 1'235'683'233});
  // Another seed, other times; the same seed, the same times.
  CHECK(times_of(drain(sc, 43), 0) != times_of(all, 0));
  CHECK(times_of(drain(sc, 42), 0) == times_of(all, 0));
}

TEST_CASE("per-request parameters come from their own sub-streams") {
  // Goal: service times, failures and cancellations per generated request. Method: golden draws from
  // "arrivals/0/service" and "arrivals/0/fail"; adding them leaves the Poisson times unchanged.
  const auto plain = with_arrivals(R"([{"kind": "poisson", "count": 12, "mean_gap": "100ms"}])");
  const auto rich = with_arrivals(R"([{"kind": "poisson", "count": 12, "mean_gap": "100ms",
      "service": {"kind": "exponential", "mean": "700ms"}, "fail_ppm": 300000, "cancel_after": "250ms",
      "client_timeout": "2s"}])");
  const auto a = drain(plain, 42);
  const auto b = drain(rich, 42);
  REQUIRE(b.size() == 12);
  CHECK(times_of(a, 0) == times_of(b, 0));
  CHECK(b[0].service_ns == 511'952'869);
  CHECK(b[1].service_ns == 525'604'580);
  CHECK(b[2].service_ns == 876'410'003);
  CHECK(b[3].service_ns == 199'554'128);
  const bool fails[] = {false, false, true, true, true, false, false, false, false, true, false, true};
  for (std::size_t i = 0; i < b.size(); ++i) {
    CAPTURE(i);
    CHECK((b[i].fail == admit::scenario::failure::constructor) == fails[i]);
    CHECK(b[i].cancel_at_ns == b[i].at_ns + 250 * ms);
    CHECK(b[i].client_timeout_ns == 2 * sec);
    CHECK(b[i].generated());
    CHECK(b[i].id() == "arrivals/0/" + std::to_string(i));
    CHECK(a[i].fail == admit::scenario::failure::none);
    CHECK_FALSE(a[i].service_ns.has_value());  // the world draws from service.service_time
    CHECK_FALSE(a[i].cancel_at_ns.has_value());
  }
}

TEST_CASE("the merge orders by time; ties go to explicit requests, then generators in file order") {
  // Goal: the documented tie rule. Method: explicit requests and three generators that collide at 0 and 1s.
  const auto sc = with_arrivals(R"([
      {"kind": "constant", "count": 2, "start": "1s", "every": "0ms"},
      {"kind": "constant", "count": 1, "start": "1s", "every": "5s"},
      {"kind": "constant", "count": 2, "every": "1s", "service": "3ms"}])",
                                R"([{"id": "x", "at": "1s", "service": "9ms", "fail": "constructor", "cancel_at": "2s"},
      {"id": "y", "at": "0ms"}, {"id": "z", "at": "1s"}])");
  const auto all = drain(sc, 1);
  std::vector<std::string> ids;
  for (const auto& a : all) ids.push_back(a.id());
  CHECK(ids == std::vector<std::string>{"y", "arrivals/2/0", "x", "z", "arrivals/0/0", "arrivals/0/1", "arrivals/1/0",
                                        "arrivals/2/1"});
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(all[i].number == i);
  const arrival& x = all[2];
  REQUIRE_FALSE(x.generated());
  CHECK(x.spec == &sc.requests[0]);
  CHECK(x.seq_in_generator == 0);  // its index in the file
  CHECK(x.generator == arrival::explicit_request);
  CHECK(x.service_ns == 9 * ms);
  CHECK(x.fail == admit::scenario::failure::constructor);
  CHECK(x.cancel_at_ns == 2 * sec);
  CHECK(all[1].service_ns == 3 * ms);  // a fixed generator service draws nothing but is set
}

TEST_CASE("the surge's gap shrinks toward the deadline and stays at gap_near past it") {
  // Goal: the surge's shape. Method: every gap of a long surge is non-increasing, at most gap_far, exactly gap_near
  // once past the deadline, and the counts before and after the deadline match the reference.
  const auto sc = with_arrivals(
      R"([{"kind": "deadline_surge", "count": 6000, "deadline": "30m", "gap_far": "2s", "gap_near": "10ms"}])");
  const auto t = times_of(drain(sc, 5), 0);
  REQUIRE(t.size() == 6000);
  sim::vtime_ns previous_gap = 2 * sec;
  std::size_t before = 0;
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    const sim::vtime_ns gap = t[k + 1] - t[k];
    REQUIRE(gap <= previous_gap);
    REQUIRE(gap >= 10 * ms);
    if (t[k] >= 30 * sim::minute) REQUIRE(gap == 10 * ms);
    previous_gap = gap;
  }
  for (auto x : t) before += x < 30 * sim::minute ? 1 : 0;
  CHECK(before == 4790);
}

TEST_CASE("a million arrivals: exact counts, monotone times, and no allocation per request") {
  // Goal: the source is lazy and O(generators) in memory. Method: 1,000,000 requests from four generators with
  // per-request parameters; count allocations while draining them, and check order and counts.
  const auto sc = with_arrivals(R"([
      {"kind": "poisson", "count": 400000, "mean_gap": "2ms", "service": {"kind": "lognormal", "median": "300ms", "sigma": 0.5},
       "fail_ppm": 1000, "cancel_after": "1s"},
      {"kind": "constant", "count": 300000, "every": "3ms", "start": "10s"},
      {"kind": "ramp", "count": 200000, "gap_from": "1ms", "gap_to": "9ms"},
      {"kind": "deadline_surge", "count": 100000, "deadline": "10m", "gap_far": "100ms", "gap_near": "1ms"}])",
                                R"([{"id": "late", "at": "2h"}, {"id": "early", "at": "0ms"}])");
  arrival_source src(sc, 9);
  CHECK(src.total() == 1'000'002);
  std::uint64_t per_generator[4] = {0, 0, 0, 0};
  std::uint64_t explicit_count = 0, failed = 0;
  sim::vtime_ns last = 0;
  bool monotone = true;
  const std::size_t allocations_before = allocations;
  while (auto a = src.next()) {
    monotone = monotone && a->at_ns >= last;
    last = a->at_ns;
    if (a->generated()) ++per_generator[a->generator];
    else ++explicit_count;
    if (a->fail == admit::scenario::failure::constructor) ++failed;
  }
  const std::size_t allocated = allocations - allocations_before;
  CHECK(allocated == 0);
  CHECK(monotone);
  CHECK(src.exhausted());
  CHECK(src.emitted() == 1'000'002);
  CHECK(per_generator[0] == 400'000);
  CHECK(per_generator[1] == 300'000);
  CHECK(per_generator[2] == 200'000);
  CHECK(per_generator[3] == 100'000);
  CHECK(explicit_count == 2);
  CHECK(last == 2 * 3600 * sec);
  // 1000 ppm of 400,000: about 400 (a loose band, far beyond chance).
  CHECK(failed > 300);
  CHECK(failed < 500);
  CHECK_FALSE(src.next().has_value());
}

TEST_CASE("the allocation counter sees allocations") {
  // Goal: the zero in the test above means something. Method: an allocation made on purpose is counted.
  const std::size_t before = allocations;
  auto* p = new std::vector<int>(1000);
  const std::size_t after = allocations;
  delete p;
  CHECK(after - before >= 2);
}

namespace {

// Records each arrival with the instant it came and whether the next one was already scheduled.
struct recording_sink {
  explicit recording_sink(sim::scheduler& s) : sched(&s) {}
  sim::scheduler* sched;
  const world::arrival_pump<recording_sink>* pump = nullptr;
  std::vector<sim::vtime_ns> at;
  std::vector<std::uint64_t> numbers;
  std::vector<bool> next_pending;
  std::vector<std::size_t> queued;  // scheduler entries pending when the world was called
  void on_arrival(const arrival& a) {
    at.push_back(sched->now_ns());
    numbers.push_back(a.number);
    next_pending.push_back(pump->pending());
    queued.push_back(sched->pending());
  }
};

}  // namespace

TEST_CASE("the arrival pump gives every arrival at its time, with only the next one scheduled") {
  // Goal: one ahead, the next scheduled before the world is called. Method: a pump over a small stream.
  const auto sc = with_arrivals(R"([{"kind": "constant", "count": 4, "start": "10ms", "every": "5ms"}])",
                                R"([{"id": "r1", "at": "12ms"}])");
  sim::scheduler sched;
  arrival_source src(sc, 1);
  recording_sink sink(sched);
  world::arrival_pump pump(sched, src, sink);
  sink.pump = &pump;
  CHECK_FALSE(pump.pending());
  pump.start();
  CHECK(pump.pending());
  CHECK(sched.pending() == 1);
  sched.run();
  CHECK(sink.at == std::vector<sim::vtime_ns>{10 * ms, 12 * ms, 15 * ms, 20 * ms, 25 * ms});
  CHECK(sink.numbers == std::vector<std::uint64_t>{0, 1, 2, 3, 4});
  CHECK(sink.next_pending == std::vector<bool>{true, true, true, true, false});
  CHECK(sink.queued == std::vector<std::size_t>{1, 1, 1, 1, 0});
  CHECK_FALSE(pump.pending());
  CHECK_THROWS_AS(pump.start(), admit::assertion_failure);  // a pump starts once
}
