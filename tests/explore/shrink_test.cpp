// The shrinker: its results on the catalogue's explore scenarios, its
// determinism, and its limits.
#include <catch2/catch.hpp>

#include "sim/explore/scenario_json.hpp"
#include "sim/explore/shrink.hpp"
#include "sim/explore/swarm.hpp"
#include "tests/explore/explore_test_support.hpp"

namespace {

using namespace admit;

using test::catalogue;

explore::shrink_result shrink_seed(const std::string& name, std::uint64_t seed, const std::string& variant,
                                   const std::string& invariant, explore::shrink_limits limits = {}) {
  const auto e = explore::explore_seed(catalogue(name), seed);
  return explore::shrink(e.sc, seed, explore::shrink_target{variant, invariant}, limits);
}

}  // namespace

TEST_CASE("a crashed renewer shrinks to one worker, one permit, two requests and one crash", "[explore][shrink]") {
  // Goal: the shrinker reaches the essence of a drawn counterexample. Method: seed 7 of explore_crashed_renewer,
  // whose renewal run breaks the portal cap after a drawn crash.
  const auto s = shrink_seed("explore_crashed_renewer", 7, "renewal", "portal_inflight_le_cap");
  REQUIRE(s.started);
  CHECK(s.reproduced);
  CHECK(s.faults_before > s.faults_after);
  CHECK(s.faults_after == 1);
  CHECK(s.minimal.faults.schedule.front().kind == scenario::fault_kind::crash);
  CHECK(s.requests_after == 2);
  CHECK(s.workers_after == 1);
  CHECK(s.minimal.gates.front().lease.limit == 1);
  CHECK(s.minimal.gates.front().lease.variants == std::vector{redis::variant::renewal});
  CHECK(s.minimal.arrivals.empty());  // explicit times only
  CHECK(s.minimal.expect.verdict == "violation");
  CHECK(s.minimal.expect.violated == std::vector<std::string>{"portal_inflight_le_cap"});
}

TEST_CASE("shrinking is deterministic", "[explore][shrink][determinism]") {
  // Goal: the same finding always gives the same file. Method: shrink a clock-step finding twice.
  const auto a = shrink_seed("explore_clock_steps", 3, "seed", "expired_leases_reaped");
  const auto b = shrink_seed("explore_clock_steps", 3, "seed", "expired_leases_reaped");
  REQUIRE(a.reproduced);
  CHECK(explore::render_scenario(a.minimal) == explore::render_scenario(b.minimal));
  CHECK(a.runs == b.runs);
  CHECK(a.faults_after <= 1);
  CHECK(a.requests_after <= 4);
}

TEST_CASE("a shrink out of budget still hands back a file that reproduces", "[explore][shrink][limits]") {
  // Goal: the run budget bounds the work and never the correctness of the result. Method: a budget of one run.
  explore::shrink_limits tight;
  tight.max_runs = 1;
  const auto s = shrink_seed("explore_crashed_renewer", 7, "renewal", "portal_inflight_le_cap", tight);
  CHECK(s.started);
  CHECK(s.budget_exhausted);
  CHECK(s.runs == 1);
  CHECK(s.reproduced);
}

TEST_CASE("a scenario that does not break the invariant is not shrunk", "[explore][shrink]") {
  // Goal: the shrinker does not invent failures. Method: the server_time run of a clock-step seed holds.
  const auto s = shrink_seed("explore_clock_steps", 0, "server_time", "portal_inflight_le_cap");
  CHECK_FALSE(s.started);
  CHECK_FALSE(s.reproduced);
}

TEST_CASE("a liveness violation shrinks without cutting the run short", "[explore][shrink]") {
  // Goal: liveness is judged at the end, so the workload is not cut at the violation's instant. Method: the leaked
  // handover mutant breaks liveness at the end; the shrunk file still does.
  const auto sc = scenario::load_scenario_text(
      test::read_bytes(test::source_path("tests/explore/mutants/leak_handover_on_cancel.json")));
  const auto e = explore::explore_seed(sc, 2);
  const auto s = explore::shrink(e.sc, 2, explore::shrink_target{"", "liveness"});
  REQUIRE(s.started);
  CHECK(s.reproduced);
  CHECK(s.requests_after <= 3);
}

TEST_CASE("a FIFO scenario with fault rates explores, and its finding shrinks to a crash that replays",
          "[explore][shrink][fifo]") {
  // Goal: explore and the shrinker work with the FIFO world's faults. Method: crashes, stalls and portal
  // partitions drawn for a gate of 2; the first seed whose run breaks the portal's cap (a restarted
  // process forgets the work still at the portal) shrinks to one crash, and the file it writes, loaded
  // back, breaks the same invariant.
  const scenario::scenario base = scenario::load_scenario_text(R"({"name": "explore_fifo",
    "gate": {"name": "api", "kind": "fifo", "max_active": 2, "max_waiting": 4, "wait_deadline": "2s"},
    "service": {"service_time": {"kind": "uniform", "min": "200ms", "max": "2s"}},
    "workload": {"arrivals": [{"kind": "poisson", "count": 300, "mean_gap": "100ms"}]},
    "faults": {"rates": {"crash_per_hour": 120, "pause_per_hour": 120, "partition_per_hour": 120,
                         "mean_duration": "1s", "until": "30s"}},
    "checks": {"liveness_horizon": "1m"}})");
  std::optional<std::uint64_t> found;
  for (std::uint64_t seed = 0; seed < 100 && !found; ++seed) {
    const auto e = explore::explore_seed(base, seed);
    for (const auto& rec : world::run_all(e.sc, seed))
      for (const auto& inv : rec.invariants)
        if (!inv.holds && inv.name == "portal_inflight_le_cap") found = seed;
  }
  REQUIRE(found);
  const auto e = explore::explore_seed(base, *found);
  const auto s = explore::shrink(e.sc, *found, explore::shrink_target{"", "portal_inflight_le_cap"});
  REQUIRE(s.started);
  CHECK(s.reproduced);
  CHECK(s.faults_after == 1);
  CHECK(s.minimal.faults.schedule.front().kind == scenario::fault_kind::crash);
  const scenario::scenario back = scenario::load_scenario_text(explore::render_scenario(s.minimal));
  const auto runs = world::run_all(back, back.seed);
  bool broke = false;
  for (const auto& inv : runs.front().invariants) broke = broke || (!inv.holds && inv.name == "portal_inflight_le_cap");
  CHECK(broke);
}

namespace {

// The first instant anything happens in `sc`: an arrival or a fault.
admit::sim::vtime_ns first_event(const scenario::scenario& sc) {
  admit::sim::vtime_ns first = INT64_MAX;
  for (const auto& r : sc.requests) first = std::min(first, r.at_ns);
  for (const auto& a : sc.arrivals) first = std::min(first, a.start_ns);
  for (const auto& f : sc.faults.schedule) first = std::min(first, f.at_ns);
  return first;
}

// Where `sc` with `seed` first breaks `invariant` in the run of `variant`, if it does.
std::optional<admit::sim::vtime_ns> broken_at(const scenario::scenario& sc, std::uint64_t seed,
                                              const std::string& variant, const std::string& invariant) {
  for (const auto& rec : world::run_all(sc, seed))
    if (rec.variant == variant)
      for (const auto& inv : rec.invariants)
        if (inv.name == invariant && inv.first) return inv.first->at_ns;
  return std::nullopt;
}

constexpr admit::sim::vtime_ns three_hours_ns = 3LL * 3600 * 1'000'000'000;

}  // namespace

TEST_CASE("a counterexample that happens late is rebased so that its story starts near zero",
          "[explore][shrink][rebase]") {
  // Goal: a shrunk file whose first arrival was at 3h reads from 1s on, and shows the same violation. Method: a
  // process crash whose restart lets new work in while the old still runs at the portal, everything 3h and
  // 350ms in; the shrunk file's times are a whole number of seconds earlier, the first event between 1s and 2s
  // (each instant keeps its place within its second), and its violation is the original's instant less the shift.
  const scenario::scenario late = scenario::load_scenario_text(R"({"name": "late_crash",
    "gate": {"name": "api", "kind": "fifo", "max_active": 2, "max_waiting": 4, "wait_deadline": "5s"},
    "service": {"service_time": "1s"},
    "workload": {"requests": [
      {"id": "a", "at": "10800350ms"}, {"id": "b", "at": "10800350ms"}, {"id": "c", "at": "10800450ms"},
      {"id": "e", "at": "10801150ms"}, {"id": "f", "at": "10801150ms"}, {"id": "g", "at": "10801200ms"}]},
    "faults": {"schedule": [{"at": "10800850ms", "kind": "crash", "target": "worker:0", "duration": "200ms"}]},
    "expect": {"verdict": "violation", "violated": ["portal_inflight_le_cap"]}})");
  const auto original_at = broken_at(late, 1, "", "portal_inflight_le_cap");
  REQUIRE(original_at);
  const auto s = explore::shrink(late, 1, explore::shrink_target{"", "portal_inflight_le_cap"});
  REQUIRE(s.started);
  CHECK(s.reproduced);
  CHECK(s.rebased_by_ns == three_hours_ns - 1'000'000'000);
  const admit::sim::vtime_ns first = first_event(s.minimal);
  CHECK(first >= 1'000'000'000);
  CHECK(first < 2'000'000'000);
  CHECK(s.rebased_by_ns % 1'000'000'000 == 0);  // each instant keeps its place within its second
  CHECK(s.minimal.faults.schedule.size() == 1);
  CHECK(s.minimal.faults.schedule.front().at_ns == 1'850'000'000);
  CHECK(s.violation_at_ns == *original_at - s.rebased_by_ns);
  CHECK(s.minimal.checks.horizon_ns == 24 * three_hours_ns / 3 - s.rebased_by_ns);
  CHECK(s.minimal.description.find("Every time is 10799s earlier") != std::string::npos);
  // The file as written says the same (the loader reads it back).
  const scenario::scenario back = scenario::load_scenario_text(explore::render_scenario(s.minimal));
  CHECK(first_event(back) == first);
  CHECK(broken_at(back, back.seed, "", "portal_inflight_le_cap") == s.violation_at_ns);
}

TEST_CASE("a rebase carries a drifting worker clock's gathered drift into its offset", "[explore][shrink][rebase]") {
  // Goal: absolute time that a world reads is not lost by the move. Method: a worker whose clock drifts 2,000 ppm
  // is 21.6s ahead by 3h, past the 15s lease, and under the seed variant reaps the others' live permits; the
  // work starts at 3h. The rebased file keeps the drift and gives worker 0 the offset it had gathered, and
  // breaks the cap at the moved instant. Without that offset the moved clock is only milliseconds ahead and
  // the violation is gone: the guard that the compensation is what keeps it.
  const scenario::scenario drifting = scenario::load_scenario_text(R"({"name": "late_drift",
    "gate": {"kind": "lease", "variant": "seed", "limit": 2, "lease": "15s", "acquire_timeout": "30s"},
    "fleet": {"workers": 3, "clocks": [{"worker": 0, "drift_ppm": 2000}]},
    "service": {"portal_cap": 2, "service_time": {"kind": "uniform", "min": "2s", "max": "6s"},
                "client_timeout": "20s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 30, "every": "250ms", "start": "3h"}]},
    "expect": {"verdict": "violation", "violated": ["portal_inflight_le_cap"]}})");
  const auto original_at = broken_at(drifting, 5, "seed", "portal_inflight_le_cap");
  REQUIRE(original_at);
  const auto s = explore::shrink(drifting, 5, explore::shrink_target{"seed", "portal_inflight_le_cap"});
  REQUIRE(s.started);
  CHECK(s.reproduced);
  REQUIRE(s.rebased_by_ns == three_hours_ns - 1'000'000'000);
  CHECK(first_event(s.minimal) >= 1'000'000'000);
  CHECK(first_event(s.minimal) < 2'000'000'000);
  CHECK(s.violation_at_ns < *original_at - s.rebased_by_ns + 10'000'000'000);
  const scenario::clock_spec clock = s.minimal.fleet.clock_of(0);
  CHECK(clock.drift_ppm == 2000);
  CHECK(clock.offset_ns == (s.rebased_by_ns / 1'000'000) * 2000);  // 21.598s
  // The guard: the same moved file without the gathered offset no longer breaks the cap.
  scenario::scenario uncompensated = s.minimal;
  for (auto& [w, c] : uncompensated.fleet.clocks) c.offset_ns = 0;
  uncompensated.fleet.clock.offset_ns = 0;
  CHECK_FALSE(broken_at(uncompensated, s.minimal.seed, "seed", "portal_inflight_le_cap"));
}

TEST_CASE("a counterexample that starts early is not moved", "[explore][shrink][rebase]") {
  // Goal: the rebase only moves late stories. Method: fifo_crash_restart starts at 0 and shrinks unmoved.
  const auto sc = catalogue("fifo_crash_restart");
  const auto s = explore::shrink(sc, 1, explore::shrink_target{"", "portal_inflight_le_cap"});
  REQUIRE(s.started);
  CHECK(s.reproduced);
  CHECK(s.rebased_by_ns == 0);
  CHECK(s.minimal.description.find("earlier than in the explored run") == std::string::npos);
}
