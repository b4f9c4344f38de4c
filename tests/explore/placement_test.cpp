// explore --placements (sim/explore/placement.hpp): every placement of a small
// scenario's faults at the instants its run acts, within a bound.
#include <catch2/catch.hpp>

#include "explore_test_support.hpp"
#include "sim/explore/placement.hpp"
#include "sim/explore/scenario_json.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/world.hpp"

using namespace admit;

namespace {

const explore::variant_placements& of(const explore::placement_summary& s, const std::string& variant) {
  for (const auto& v : s.variants)
    if (v.variant == variant) return v;
  FAIL("no variant " << variant);
  return s.variants.front();
}

}  // namespace

TEST_CASE("placements: a failover at every instant breaks the unacknowledged gate, never WAIT's", "[explore][placement][heavy]") {
  const scenario::scenario base = test::catalogue_file("redis_failover");
  explore::placement_limits lim;
  lim.jobs = 2;
  const explore::placement_summary s = explore::enumerate_placements(base, lim);
  REQUIRE(s.variants.size() == 3);
  const auto& seed = of(s, "seed");
  const auto& wait = of(s, "wait_ack");
  // One fault: the fault-free run, then one run per candidate instant (1ns either side of each).
  CHECK(seed.complete);
  CHECK(seed.runs == seed.placements + 1);
  CHECK(seed.placements + seed.skipped_past_horizon <= 2 * seed.instants_fault_free);
  CHECK(seed.placements > 100);
  CHECK(seed.violating > 0);
  CHECK(seed.counterexamples == 0);  // the scenario expects the seed variant to break
  CHECK(wait.complete);
  CHECK(wait.placements > 100);
  CHECK(wait.violating == 0);
  // The first violating placement, written as a scenario, breaks under a plain run.
  REQUIRE_FALSE(seed.findings.empty());
  const scenario::scenario one = explore::placed(base, "seed", seed.findings.front().at_ns);
  REQUIRE(one.faults.schedule.size() == 1);
  CHECK(one.faults.schedule.front().at_ns == seed.findings.front().at_ns.front());
  // It is a scenario file the loader takes (one run: the variant's expectation is the file's).
  REQUIRE_NOTHROW(scenario::load_scenario_text(explore::render_scenario(one)));
  CHECK(one.expect.verdict == "violation");
  CHECK(one.expect.variants.empty());
  const auto recs = world::run_all(one, one.seed);
  REQUIRE(recs.size() == 1);
  bool broke = false;
  for (const auto& inv : recs.front().invariants) broke = broke || !inv.holds;
  CHECK(broke);
}

TEST_CASE("placements: the result does not depend on --jobs, and the bound cuts a search", "[explore][placement]") {
  const scenario::scenario base = test::catalogue_file("fifo_crash_restart");
  explore::placement_limits lim;
  lim.jobs = 1;
  const auto one = explore::enumerate_placements(base, lim);
  lim.jobs = 3;
  const auto three = explore::enumerate_placements(base, lim);
  REQUIRE(one.variants.size() == 1);
  const auto& a = one.variants.front();
  const auto& b = three.variants.front();
  CHECK(a.complete);
  CHECK(a.placements == b.placements);
  CHECK(a.violating == b.violating);
  REQUIRE(a.findings.size() == b.findings.size());
  for (std::size_t i = 0; i < a.findings.size(); ++i) CHECK(a.findings[i].at_ns == b.findings[i].at_ns);
  CHECK(a.violating > 0);  // a crash whose restart lets new work in beside the old
  CHECK(a.violating < a.placements);
  lim.max_runs = 5;
  const auto cut = explore::enumerate_placements(base, lim);
  CHECK_FALSE(cut.variants.front().complete);
  CHECK(cut.variants.front().runs == 5);
  CHECK(cut.variants.front().placements == 4);
}

TEST_CASE("placements: two faults, the second at or after the first", "[explore][placement]") {
  scenario::scenario base = test::catalogue_file("fifo_crash_restart");
  REQUIRE(base.faults.schedule.size() == 1);
  base.faults.schedule.push_back(base.faults.schedule.front());
  explore::placement_limits lim;
  lim.jobs = 2;
  lim.findings_kept = 1'000'000;
  const auto s = explore::enumerate_placements(base, lim);
  const auto& v = s.variants.front();
  CHECK(v.complete);
  CHECK(v.placements > 15);
  for (const auto& f : v.findings) {
    REQUIRE(f.at_ns.size() == 2);
    CHECK(f.at_ns[0] <= f.at_ns[1]);
  }
}

TEST_CASE("placements: what the search refuses", "[explore][placement]") {
  CHECK(explore::placement_refusal(test::catalogue_file("redis_failover")).empty());
  CHECK(explore::placement_refusal(test::catalogue("explore_clock_steps")).rfind("/faults/rates", 0) == 0);
  scenario::scenario none = test::catalogue_file("redis_failover");
  none.faults.schedule.clear();
  CHECK(explore::placement_refusal(none).rfind("/faults/schedule: expected 1 to 3", 0) == 0);
  scenario::scenario many = test::catalogue_file("redis_failover");
  for (int i = 0; i < 3; ++i) many.faults.schedule.push_back(many.faults.schedule.front());
  CHECK(explore::placement_refusal(many).find("got 4") != std::string::npos);
}
