// Tests for the three verdicts: a run that could not finish is inconclusive,
// never a pass and never an expected violation, in both worlds; the liveness
// horizon is judged; fault draws are limited per kind and a cut draw is
// inconclusive. Each case is one that gave a false verdict before.
#include <catch2/catch.hpp>
#include <string>

#include "reports/report.hpp"
#include "sim/world/fault_draw.hpp"
#include "tests/world/world_test_support.hpp"

namespace {

using admit::test::run_text;

std::string fifo_doc(const std::string& workload, const std::string& extra) {
  return R"({"name": "t", "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 8}, "workload": )" + workload +
         ", " + extra + "}";
}
std::string lease_doc(const std::string& workload, const std::string& extra) {
  return R"({"name": "t", "gate": {"kind": "lease", "limit": 1}, "workload": )" + workload + ", " + extra + "}";
}

bool met(const std::string& text, std::uint64_t seed = 1) {
  const auto sc = admit::scenario::load_scenario_text(text);
  const auto runs = admit::world::run_all(sc, seed);
  for (const auto& r : runs)
    if (!admit::reports::as_expected(sc, r)) return false;
  return true;
}

}  // namespace

TEST_CASE("a horizon before the first arrival is inconclusive, not a pass", "[world][verdict]") {
  // Goal: a run that saw none of its workload judges nothing. Method: one request at 10s, horizon 1s; the
  // report's verdict, its reason, and that neither "pass" nor "violation" is met but "inconclusive" is.
  const std::string wl = R"({"requests": [{"at": "10s"}]})";
  const auto r = run_text(fifo_doc(wl, R"("checks": {"horizon": "1s"})"), 1);
  CHECK(std::string(r.rec.verdict()) == "inconclusive");
  REQUIRE(r.rec.inconclusive);
  CHECK(r.rec.inconclusive->kind == "horizon");
  CHECK(r.rec.inconclusive->detail ==
        "the run reached its horizon 1s (checks.horizon) before the workload ended: 1 of 1 requests had not ended");
  CHECK(r.report["verdict"] == "inconclusive");
  CHECK(r.report["inconclusive"]["reason"] == "horizon");
  CHECK_FALSE(met(fifo_doc(wl, R"("checks": {"horizon": "1s"}, "expect": {"verdict": "pass"})")));
  CHECK_FALSE(met(fifo_doc(wl, R"("checks": {"horizon": "1s"}, "expect": {"verdict": "violation"})")));
  CHECK(met(fifo_doc(wl, R"("checks": {"horizon": "1s"}, "expect": {"verdict": "inconclusive"})")));
  // The same request within the horizon passes.
  CHECK(met(fifo_doc(wl, R"("checks": {"horizon": "1h"}, "expect": {"verdict": "pass"})")));
}

TEST_CASE("a used-up event budget is inconclusive, never the expected violation", "[world][verdict]") {
  // Goal: running out of events is not a liveness finding. Method: 50 requests under a budget of 20 events,
  // expecting a violation (which the cut used to satisfy), in the FIFO and the lease world.
  const std::string wl = R"({"arrivals": [{"kind": "constant", "count": 50, "every": "10ms"}]})";
  const std::string checks = R"("checks": {"max_events": 20}, "expect": {"verdict": "violation"})";
  for (const std::string& text : {fifo_doc(wl, checks), lease_doc(wl, checks)}) {
    CAPTURE(text);
    const auto r = run_text(text, 1);
    CHECK(std::string(r.rec.verdict()) == "inconclusive");
    REQUIRE(r.rec.inconclusive);
    CHECK(r.rec.inconclusive->kind == "event_budget");
    CHECK(r.rec.inconclusive->detail.find("budget of 20 events (checks.max_events)") != std::string::npos);
    for (const auto& inv : r.rec.invariants) CHECK(inv.holds);  // liveness is not judged on a cut run
    CHECK_FALSE(met(text));
  }
}

TEST_CASE("the wall-clock guard makes a run inconclusive", "[world][verdict]") {
  // Goal: checks.max_wall bounds a run's wall time and is never a verdict. Method: 2,000,000 requests under a
  // 1ms guard; the run stops after its first slice of events with reason wall_limit.
  const std::string wl = R"({"arrivals": [{"kind": "constant", "count": 2000000, "every": "1ms"}]})";
  const auto r = run_text(fifo_doc(wl, R"("checks": {"max_wall": "1ms"})"), 1);
  REQUIRE(r.rec.inconclusive);
  CHECK(r.rec.inconclusive->kind == "wall_limit");
  CHECK(r.rec.metrics.requests < 2'000'000);
}

TEST_CASE("the liveness horizon is judged at its instant", "[world][verdict]") {
  // Goal: checks.liveness_horizon is honoured, not only a bound on faults. Method: a request working 10s with a
  // liveness horizon of 5s breaks liveness there; one working 1s holds, with the same events and simulated time
  // as without the horizon (the check adds no event). Both worlds.
  for (const bool is_lease : {false, true}) {
    CAPTURE(is_lease);
    auto make = [&](const char* service, const char* checks) {
      const std::string wl = std::string(R"({"requests": [{"at": "0ms", "service": ")") + service + R"("}]})";
      return is_lease ? lease_doc(wl, checks) : fifo_doc(wl, checks);
    };
    const auto late = run_text(make("10s", R"("checks": {"liveness_horizon": "5s"})"), 1);
    const auto* live = &late.rec.invariants.back();
    for (const auto& inv : late.rec.invariants)
      if (inv.name == "liveness") live = &inv;
    REQUIRE(live->name == "liveness");
    CHECK_FALSE(live->holds);
    REQUIRE(live->first);
    CHECK(live->first->detail.rfind("at checks.liveness_horizon (5s) ", 0) == 0);
    CHECK(live->first->at_ns == 5 * admit::sim::sec);  // dated at the horizon, not at the last event before it
    const auto on_time = run_text(make("1s", R"("checks": {"liveness_horizon": "5s"})"), 1);
    const auto plain = run_text(make("1s", R"("checks": {})"), 1);
    CHECK(std::string(on_time.rec.verdict()) == "pass");
    CHECK(on_time.rec.diagnostics.events == plain.rec.diagnostics.events);
    CHECK(on_time.rec.metrics.simulated_ns == plain.rec.metrics.simulated_ns);
  }
}

TEST_CASE("fault draws are limited per kind, and a cut draw is inconclusive", "[world][verdict][faults]") {
  // Goal: a high rate of one kind neither starves the other kinds nor passes silently. Method: crashes at
  // 3,600/h for 30h (about 108,000, above the per-kind limit) beside clock steps at 60/h: the steps are all
  // drawn, crash is reported as limited, and a run of the scenario is inconclusive with reason fault_draw_limit.
  admit::scenario::fault_rates rates;
  rates.per_hour_of(admit::scenario::fault_kind::crash) = 3'600;
  rates.per_hour_of(admit::scenario::fault_kind::clock_step) = 60;
  rates.until_ns = 30LL * 3600 * admit::sim::sec;
  admit::world::fault_nodes nodes;
  nodes.workers = 2;
  nodes.has_redis = true;
  std::vector<admit::scenario::fault_kind> limited;
  const auto drawn = admit::world::draw_faults(rates, nodes, 3, &limited);
  REQUIRE(limited == std::vector<admit::scenario::fault_kind>{admit::scenario::fault_kind::crash});
  std::size_t crashes = 0, steps = 0;
  for (const auto& f : drawn) {
    crashes += f.kind == admit::scenario::fault_kind::crash;
    steps += f.kind == admit::scenario::fault_kind::clock_step;
  }
  CHECK(crashes == admit::world::drawn_faults_per_kind_max);
  CHECK(steps > 1'000);  // about 1,800: none lost to the crashes' limit

  const std::string text = R"({"name": "t", "gate": {"kind": "lease", "limit": 1}, "fleet": {"workers": 2},
    "workload": {"requests": [{"at": "0ms", "service": "1s"}]},
    "faults": {"rates": {"crash_per_hour": 3600, "until": "30h"}}, "checks": {"horizon": "31h"}})";
  const auto r = run_text(text, 3);
  REQUIRE(r.rec.inconclusive);
  CHECK(r.rec.inconclusive->kind == "fault_draw_limit");
  CHECK(r.rec.inconclusive->detail.find("(crash)") != std::string::npos);
}
