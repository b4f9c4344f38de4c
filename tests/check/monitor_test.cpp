// The checking part every world is built with: the trace ring, the monitor
// and the verdict rules (sim/check).
#include <array>
#include <catch2/catch.hpp>

#include <thread>
#include <string>
#include <utility>
#include <vector>

#include "sim/check/monitor.hpp"
#include "sim/check/trace_ring.hpp"
#include "sim/check/verdict.hpp"
#include "sim/kernel/scheduler.hpp"

using namespace admit;

namespace {

std::vector<int> kept(const check::trace_ring<int>& ring) {
  std::vector<int> out;
  ring.for_each([&](int v) { out.push_back(v); });
  return out;
}

constexpr std::array<const char*, 2> two_invariants = {"gate_inflight_le_cap", "liveness"};
constexpr std::uint8_t fifo_probes = admit::probe::in_fifo;

check::invariant_result broken(const char* name) {
  check::invariant_result r;
  r.name = name;
  r.holds = false;
  r.first = check::violation{1, "broke", 0};
  return r;
}
check::invariant_result held(const char* name) {
  check::invariant_result r;
  r.name = name;
  return r;
}

}  // namespace

TEST_CASE("trace_ring keeps the newest entries, oldest first, and counts what fell out") {
  check::trace_ring<int> ring(3);
  for (int i = 1; i <= 5; ++i) *ring.next() = i;
  CHECK(kept(ring) == std::vector<int>{3, 4, 5});
  CHECK(ring.total() == 5);
  CHECK(ring.dropped() == 2);
  ring.freeze();
  CHECK(ring.next() == nullptr);
  CHECK(ring.total() == 6);  // counted, not kept
  CHECK(kept(ring) == std::vector<int>{3, 4, 5});
}

TEST_CASE("trace_ring of capacity 0 keeps nothing and counts everything") {
  check::trace_ring<int> ring(0);
  CHECK(ring.next() == nullptr);
  CHECK(ring.next() == nullptr);
  CHECK(ring.total() == 2);
  CHECK(ring.dropped() == 0);
  CHECK(kept(ring).empty());
}

// The rows of the invariant table that apply to `world`, in table order: the list a world may report.
template <unsigned World>
constexpr auto rows_of() {
  constexpr std::size_t n = [] {
    std::size_t k = 0;
    for (const auto& row : check::invariant_table) k += (row.worlds & World) != 0;
    return k;
  }();
  std::array<const char*, n> out{};
  std::size_t k = 0;
  for (const auto& row : check::invariant_table)
    if ((row.worlds & World) != 0) out[k++] = row.name;
  return out;
}

TEST_CASE("a world's invariant list must be exactly the table's rows for it") {
  constexpr auto lease = rows_of<check::world_lease>();
  constexpr auto fifo = rows_of<check::world_fifo>();
  STATIC_REQUIRE(check::are_world_rows(lease, check::world_lease));
  STATIC_REQUIRE(check::are_world_rows(fifo, check::world_fifo));
  // In another order too: a world reports in its own order.
  constexpr auto reversed = [] {
    auto r = rows_of<check::world_lease>();
    for (std::size_t i = 0; i < r.size() / 2; ++i) std::swap(r[i], r[r.size() - 1 - i]);
    return r;
  }();
  STATIC_REQUIRE(check::are_world_rows(reversed, check::world_lease));
  // One short, one twice, or another world's list: refused.
  constexpr auto short_list = [] {
    constexpr auto all = rows_of<check::world_lease>();
    std::array<const char*, all.size() - 1> r{};
    for (std::size_t i = 0; i + 1 < all.size(); ++i) r[i] = all[i];
    return r;
  }();
  STATIC_REQUIRE_FALSE(check::are_world_rows(short_list, check::world_lease));
  constexpr auto twice = [] {
    auto r = rows_of<check::world_lease>();
    r[1] = r[0];
    return r;
  }();
  STATIC_REQUIRE_FALSE(check::are_world_rows(twice, check::world_lease));
  STATIC_REQUIRE_FALSE(check::are_world_rows(lease, check::world_fifo));
  STATIC_REQUIRE_FALSE(check::are_world_rows(fifo, check::world_lease));
}

TEST_CASE("with stop_at_first the monitor records the first violation, freezes the trace and stops the scheduler") {
  sim::scheduler sched;
  check::monitor<int> mon(sched, two_invariants, {}, fifo_probes, 8, /*stop_at_first=*/true);
  int runs = 0;
  sched.schedule_at(10, [&] {
    ++runs;
    *mon.trace() = 1;
    mon.check(0, true, [] { return std::string("never asked"); });
    mon.check(0, false, [] { return std::string("over the cap"); });
    mon.check(0, false, [] { return std::string("a second time"); });
    CHECK(mon.trace() == nullptr);  // frozen on what led to it
  });
  sched.schedule_at(20, [&] { ++runs; });
  sched.run();
  CHECK(runs == 1);  // stopped after the event that broke it
  CHECK(mon.stopped());
  const auto results = mon.take_invariants();
  REQUIRE(results.size() == 2);
  CHECK(results[0].checked == 3);
  CHECK_FALSE(results[0].holds);
  REQUIRE(results[0].first);
  CHECK(results[0].first->at_ns == 10);
  CHECK(results[0].first->detail == "over the cap");
  CHECK(results[0].first->trace_index == 1);
  CHECK(results[1].holds);
  CHECK(results[1].checked == 0);
}

TEST_CASE("by default a run keeps going: every failed step of an event invariant is a window") {
  sim::scheduler sched;
  check::monitor<int> mon(sched, two_invariants, {}, fifo_probes, 8);
  int runs = 0;
  sched.schedule_at(10, [&] {
    ++runs;
    *mon.trace() = 1;
    mon.check(1, false, [] { return check::finding{"first", {{"unexplained", "why one"}}}; });
    CHECK(mon.trace() == nullptr);  // the trace still freezes on what led to the first
  });
  sched.schedule_at(20, [&] {
    ++runs;
    mon.check(1, true, [] { return std::string("never asked"); });
    mon.check(1, false, [] { return check::finding{"second", {{"unexplained", "why two"}}}; });
  });
  sched.run();
  CHECK(runs == 2);
  CHECK_FALSE(mon.stopped());
  mon.tear_down();
  const auto results = mon.take_invariants();
  const check::invariant_result& r = results[1];
  CHECK_FALSE(r.level);
  CHECK(r.checked == 3);
  REQUIRE(r.first);
  CHECK(r.first->at_ns == 10);
  CHECK(r.first->detail == "first");
  CHECK(r.windows == 2);
  CHECK(r.time_in_violation_ns == 0);
  CHECK_FALSE(r.worst);
  REQUIRE(r.window_list.size() == 2);
  CHECK(r.window_list[1].start_ns == 20);
  CHECK(r.window_list[1].end_ns == 20);
  CHECK(r.window_list[1].detail == "second");
  REQUIRE(r.window_list[1].causes.size() == 1);
  CHECK(r.window_list[1].causes[0].detail == "why two");
  REQUIRE(r.causes.size() == 1);
  CHECK(r.causes[0].kind == "unexplained");
  CHECK(r.causes[0].count == 2);
  CHECK(r.causes[0].example == "why one");
}

TEST_CASE("a level invariant's windows: open above the bound, peak, close at or below it, exact totals") {
  sim::scheduler sched;
  check::monitor<int> mon(sched, two_invariants, {}, fifo_probes, 8);
  int described = 0;
  // value at time: 3@0, 5@100, 7@150, 6@180, 4@200 (closes), 9@300, 8@350, still above at the end (500).
  const std::vector<std::pair<sim::vtime_ns, std::int64_t>> steps = {{0, 3},   {100, 5}, {150, 7}, {180, 6},
                                                                     {200, 4}, {300, 9}, {350, 8}};
  for (const auto& [at, value] : steps)
    sched.schedule_at(at, [&, value = value] {
      mon.level(0, value, 4, [&] {
        ++described;
        return check::finding{"at " + std::to_string(value),
                              {{"unexplained", "lost permit A"}, {"unexplained", "lost permit " + std::to_string(value)}}};
      });
    });
  sched.schedule_at(500, [] {});
  sched.run();
  mon.tear_down();
  const auto results = mon.take_invariants();
  const check::invariant_result& r = results[0];
  CHECK(r.level);
  CHECK(r.checked == steps.size());
  CHECK_FALSE(r.holds);
  REQUIRE(r.first);
  CHECK(r.first->at_ns == 100);
  CHECK(r.first->detail == "at 5");
  CHECK(described == 3);  // opened at 5, peaked at 7; opened at 9 (6 and 8 are no new peak)
  CHECK(r.windows == 2);
  CHECK(r.time_in_violation_ns == (200 - 100) + (500 - 300));
  REQUIRE(r.worst);
  CHECK(r.worst->value == 9);
  CHECK(r.worst->bound == 4);
  CHECK(r.worst->at_ns == 300);
  REQUIRE(r.window_list.size() == 2);
  CHECK(r.window_list[0].start_ns == 100);
  CHECK(r.window_list[0].end_ns == 200);
  CHECK(r.window_list[0].peak == 7);
  CHECK(r.window_list[0].peak_ns == 150);
  CHECK_FALSE(r.window_list[0].open_at_end);
  CHECK(r.window_list[1].end_ns == 500);
  CHECK(r.window_list[1].open_at_end);
  // Causes: "lost permit A" once per window; "lost permit 5", "7", "9" once each.
  REQUIRE(r.window_list[0].causes.size() == 3);
  REQUIRE(r.causes.size() == 1);
  CHECK(r.causes[0].count == 5);
}

TEST_CASE("the window list is bounded, its totals are not") {
  sim::scheduler sched;
  check::monitor<int> mon(sched, two_invariants, {}, fifo_probes, 8);
  const std::size_t n = check::max_windows_kept + 10;
  for (std::size_t i = 0; i < n; ++i) {
    const auto t = static_cast<sim::vtime_ns>(10 * i);
    sched.schedule_at(t, [&] { mon.level(0, 5, 4, [] { return std::string("over"); }); });
    sched.schedule_at(t + 3, [&] { mon.level(0, 4, 4, [] { return std::string("never asked"); }); });
  }
  sched.run();
  mon.tear_down();
  const auto results = mon.take_invariants();
  CHECK(results[0].windows == n);
  CHECK(results[0].window_list.size() == check::max_windows_kept);
  CHECK(results[0].time_in_violation_ns == static_cast<sim::vtime_ns>(3 * n));
}

TEST_CASE("an invariant left out of checks.invariants is not checked") {
  sim::scheduler sched;
  check::monitor<int> mon(sched, two_invariants, {"liveness"}, fifo_probes, 8);
  mon.check(0, false, [] { return std::string("not checked"); });
  CHECK_FALSE(mon.stopped());
  const auto results = mon.take_invariants();
  CHECK_FALSE(results[0].enabled);
  CHECK(results[0].holds);
  CHECK(results[0].checked == 0);
  CHECK(results[1].enabled);
}

TEST_CASE("after teardown nothing is checked, counted or traced") {
  sim::scheduler sched;
  check::monitor<int> mon(sched, two_invariants, {}, fifo_probes, 8);
  ADMIT_PROBE(fifo_promoted);
  ADMIT_PROBE(lease_portal_429);  // counted, but not a probe of this world's report
  mon.tear_down();
  ADMIT_PROBE(fifo_promoted);
  mon.check(0, false, [] { return std::string("during teardown"); });
  CHECK(mon.trace() == nullptr);
  CHECK(mon.trace_entries().total() == 0);
  CHECK_FALSE(mon.stopped());
  const check::probe_counts probes = mon.probes();
  // The FIFO world's probes of the table, in its order.
  std::size_t fifo_rows = 0;
  for (const auto& r : admit::probe::table) fifo_rows += (r.worlds & admit::probe::in_fifo) != 0;
  REQUIRE(probes.size() == fifo_rows);
  CHECK(probes[0] == std::pair<std::string, std::uint64_t>{"queued", 0});
  CHECK(probes[3] == std::pair<std::string, std::uint64_t>{"promoted", 1});
}

TEST_CASE("a probe counts into the scope current on its thread, and nowhere without one") {
  ADMIT_PROBE(lua_noscript);  // no scope: counts nowhere, and is no error
  admit::probe::counts* before = admit::probe::current;
  {
    admit::probe::scope outer;
    ADMIT_PROBE(lua_noscript);
    {
      admit::probe::scope inner;
      ADMIT_PROBE(lua_noscript);
      ADMIT_PROBE(lua_noscript);
      CHECK(inner.get().n[static_cast<std::size_t>(admit::probe::site::lua_noscript)] == 2);
    }
    ADMIT_PROBE(lua_noscript);
    CHECK(outer.get().n[static_cast<std::size_t>(admit::probe::site::lua_noscript)] == 2);
    outer.freeze();
    ADMIT_PROBE(lua_noscript);
    CHECK(outer.get().n[static_cast<std::size_t>(admit::probe::site::lua_noscript)] == 2);
  }
  CHECK(admit::probe::current == before);
  // Another thread's run has its own scope.
  admit::probe::scope mine;
  std::thread other([] {
    admit::probe::scope theirs;
    ADMIT_PROBE(replica_wrong_type);
  });
  other.join();
  CHECK(mine.get().n[static_cast<std::size_t>(admit::probe::site::replica_wrong_type)] == 0);
}

TEST_CASE("an index outside the world's invariants is an assertion, not a stray write") {
  sim::scheduler sched;
  check::monitor<int> mon(sched, two_invariants, {}, fifo_probes, 8);
  CHECK_THROWS_AS(mon.check(2, false, [] { return std::string(); }), admit::assertion_failure);
  CHECK_THROWS_AS(mon.check(64, false, [] { return std::string(); }), admit::assertion_failure);
  // Skipped checks still refuse it: with every invariant disabled, and after teardown.
  check::monitor<int> none_enabled(sched, two_invariants, {"expired_leases_reaped"}, fifo_probes, 8);
  none_enabled.check(1, false, [] { return std::string("not checked"); });
  CHECK_THROWS_AS(none_enabled.check(2, false, [] { return std::string(); }), admit::assertion_failure);
  mon.tear_down();
  mon.check(1, false, [] { return std::string("during teardown"); });
  CHECK_THROWS_AS(mon.check(2, false, [] { return std::string(); }), admit::assertion_failure);
  CHECK_FALSE(mon.stopped());
}

TEST_CASE("verdicts: violation, else inconclusive, else pass") {
  const std::vector<check::invariant_result> fine = {held("liveness")};
  const std::vector<check::invariant_result> bad = {held("liveness"), broken("gate_inflight_le_cap")};
  CHECK(std::string(check::verdict_of(fine, false)) == "pass");
  CHECK(std::string(check::verdict_of(fine, true)) == "inconclusive");
  CHECK(std::string(check::verdict_of(bad, true)) == "violation");
  CHECK(std::string(check::combined_verdict(false, true)) == "inconclusive");
  CHECK(std::string(check::combined_verdict(true, true)) == "violation");
}

TEST_CASE("an inconclusive run meets only an expected inconclusive") {
  const std::vector<check::invariant_result> fine = {held("liveness")};
  const std::vector<std::string> none;
  CHECK_FALSE(check::meets({"pass", none}, fine, true));
  CHECK(check::meets({"inconclusive", none}, fine, true));
  CHECK(check::meets({"pass", none}, fine, false));
  CHECK_FALSE(check::meets({"violation", none}, fine, false));
}

TEST_CASE("an expected violation is met only when every named invariant broke") {
  const std::vector<check::invariant_result> bad = {held("liveness"), broken("gate_inflight_le_cap")};
  const std::vector<std::string> named = {"gate_inflight_le_cap"};
  const std::vector<std::string> both = {"gate_inflight_le_cap", "liveness"};
  CHECK(check::meets({"violation", named}, bad, false));
  CHECK_FALSE(check::meets({"violation", both}, bad, false));
  CHECK_FALSE(check::meets({"pass", named}, bad, false));
}

TEST_CASE("a counterexample is a break the expectation does not allow") {
  const std::vector<check::invariant_result> bad = {held("liveness"), broken("gate_inflight_le_cap")};
  const std::vector<std::string> none;
  const std::vector<std::string> other = {"liveness"};
  const std::vector<std::string> named = {"gate_inflight_le_cap"};
  CHECK(check::is_counterexample({"pass", none}, bad));
  CHECK(check::is_counterexample({"violation", other}, bad));
  CHECK_FALSE(check::is_counterexample({"violation", named}, bad));
  CHECK_FALSE(check::is_counterexample({"violation", none}, bad));  // any break is the expected one
  const std::vector<check::invariant_result> fine = {held("liveness")};
  CHECK_FALSE(check::is_counterexample({"pass", none}, fine));
}
