// The seed sources of explore --search (sim/explore/seed_source.hpp): plain
// is `admitsim run --seed`; a guided search stays inside the scenario's fault
// model, writes scenarios the loader takes back, learns (some seeds are
// mutants), and does not depend on --jobs.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "explore_test_support.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/explore/scenario_json.hpp"
#include "sim/explore/seed_source.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/fault_draw.hpp"

using namespace admit;
using admit::explore::search_strategy;

namespace {

explore::explore_summary search(const scenario::scenario& sc, search_strategy s, std::uint64_t seeds, unsigned jobs) {
  explore::explore_options opt;
  opt.seeds.count = seeds;
  opt.jobs = jobs;
  opt.mode.strategy = s;
  return explore::run_explore(sc, opt);
}

}  // namespace

TEST_CASE("plain: each seed runs the scenario as admitsim run --seed does", "[explore][search]") {
  const scenario::scenario base = test::catalogue_file("explore_redis_faults");
  const auto source = explore::make_seed_source(search_strategy::plain, base);
  CHECK(source->lag() == 0);
  for (std::uint64_t seed : {0u, 7u, 123u}) {
    const explore::seed_plan p = source->plan(seed);
    scenario::scenario expected = world::with_drawn_faults(base, seed);
    expected.seed = seed;
    CHECK(explore::render_scenario(p.e.sc) == explore::render_scenario(expected));
    CHECK(p.run_seed == seed);
  }
}

TEST_CASE("guided: every plan stays inside the fault model and is a scenario the loader takes back", "[explore][search][heavy]") {
  for (const char* name : {"explore_redis_faults", "explore_clock_steps", "explore_crashed_renewer"}) {
    INFO(name);
    const scenario::scenario base = test::catalogue_file(name);
    REQUIRE(base.faults.rates);
    const explore::explore_summary s = search(base, search_strategy::guided, 40, 2);
    REQUIRE(s.seeds.size() == 40);
    std::size_t mutants = 0, tuned = 0;
    for (const explore::seed_outcome& o : s.seeds) {
      REQUIRE(o.plan != nullptr);
      CHECK(test::outside_the_model(base, *o.plan) == "");
      mutants += o.plan->origin.rfind("mutant of seed ", 0) == 0 ? 1 : 0;
      tuned += o.plan->origin == "tuned swarm" ? 1 : 0;
      // The scenario it ran, written and read back, is the same scenario.
      const std::string bytes = explore::render_scenario(o.plan->e.sc);
      scenario::scenario back;
      REQUIRE_NOTHROW(back = scenario::load_scenario_text(bytes));
      CHECK(explore::render_scenario(back) == bytes);
    }
    CHECK(mutants + tuned == 40);
    CHECK(tuned >= 5);
    // Only a clean seed enters the corpus (a break is a finding already): where many seeds are clean,
    // some seeds are mutants once it has an entry; where none is, none is.
    const std::uint64_t clean = s.judged - s.violating;
    INFO(clean << " clean seeds");
    if (clean >= 20) CHECK(mutants >= 2);
    if (clean == 0) CHECK(mutants == 0);
  }
}

TEST_CASE("guided: a mutant's run is its scenario's run (what a finding's explored file reproduces)", "[explore][search][heavy]") {
  const scenario::scenario base = test::catalogue_file("explore_redis_faults");
  const explore::explore_summary s = search(base, search_strategy::guided, 40, 2);
  std::size_t compared = 0;
  for (const explore::seed_outcome& o : s.seeds) {
    if (o.plan->origin.rfind("mutant", 0) != 0 || compared == 3) continue;
    ++compared;
    const explore::seed_outcome again = explore::run_plan(base, o.plan, {});
    REQUIRE(again.runs.size() == o.runs.size());
    for (std::size_t i = 0; i < o.runs.size(); ++i) {
      CHECK(again.runs[i].broken.size() == o.runs[i].broken.size());
      CHECK(again.runs[i].events == o.runs[i].events);
    }
    // And through the file: the world's events of the scenario read back are the same.
    const scenario::scenario back = scenario::load_scenario_text(explore::render_scenario(o.plan->e.sc));
    CHECK(test::outcome_bytes(back, o.plan->run_seed) == test::outcome_bytes(o.plan->e.sc, o.plan->run_seed));
  }
  CHECK(compared == 3);
}

TEST_CASE("guided: the plans and findings do not depend on --jobs", "[explore][search]") {
  const scenario::scenario base = test::catalogue("explore_clock_steps");
  const explore::explore_summary one = search(base, search_strategy::guided, 30, 1);
  const explore::explore_summary three = search(base, search_strategy::guided, 30, 3);
  REQUIRE(one.seeds.size() == three.seeds.size());
  for (std::size_t i = 0; i < one.seeds.size(); ++i) {
    CHECK(one.seeds[i].plan->origin == three.seeds[i].plan->origin);
    CHECK(explore::render_scenario(one.seeds[i].plan->e.sc) == explore::render_scenario(three.seeds[i].plan->e.sc));
    CHECK(one.seeds[i].any_violation() == three.seeds[i].any_violation());
  }
  CHECK(one.violating == three.violating);
  CHECK(one.coverage == three.coverage);
}

TEST_CASE("a search strategy is named on the command line", "[explore][search]") {
  CHECK(explore::parse_search_strategy("guided") == search_strategy::guided);
  CHECK(explore::parse_search_strategy("swarm") == search_strategy::swarm);
  CHECK(explore::parse_search_strategy("plain") == search_strategy::plain);
  CHECK_FALSE(explore::parse_search_strategy("Guided"));
  CHECK_FALSE(explore::parse_search_strategy(""));
}
