// The shrinker: its results on the catalogue's explore scenarios, its
// determinism, and its limits.
#include <catch2/catch.hpp>

#include "sim/explore/scenario_json.hpp"
#include "sim/explore/shrink.hpp"
#include "sim/explore/swarm.hpp"
#include "tests/explore/explore_test_support.hpp"

namespace {

using namespace admit;

scenario::scenario catalogue(const std::string& name) {
  return scenario::load_scenario_text(test::read_bytes(test::source_path("scenarios/" + name + ".json")));
}

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
  CHECK(s.minimal.gates.front().lease.variants == std::vector{scenario::lease_variant::renewal});
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
