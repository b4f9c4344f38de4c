// reports/evidence: the bound a clean search rests on, its sentence, and its JSON read back.
#include <catch2/catch.hpp>
#include <string>

#include "reports/evidence.hpp"
#include "reports/matrix_report.hpp"

using admit::reports::bound_percent;
using admit::reports::bound_ppm;
using admit::reports::evidence;
using admit::reports::evidence_error;
using admit::reports::one_seed_in;

TEST_CASE("the 95% bound after n clean seeds is 1 - 0.05^(1/n), rounded up, and 1 in K is no rarer") {
  CHECK(bound_ppm(0) == 1'000'000);  // nothing known
  CHECK(bound_ppm(1) == 950'000);
  CHECK(bound_ppm(16) == 170'750);
  CHECK(bound_ppm(300) == 9'937);
  CHECK(bound_ppm(1'000) == 2'992);
  CHECK(bound_ppm(1'000'000) == 3);
  CHECK(one_seed_in(300) == 100);
  CHECK(one_seed_in(1'000) == 334);
  CHECK(one_seed_in(1) == 1);
  // Rounded up in print too: the bound never shrinks on its way to a reader.
  CHECK(bound_percent(bound_ppm(300)) == "1.0%");
  CHECK(bound_percent(bound_ppm(16)) == "17.1%");
  CHECK(bound_percent(bound_ppm(1'000)) == "0.3%");
  CHECK(bound_percent(1) == "0.1%");
  CHECK(bound_percent(1'000'000) == "100%");
  // More clean seeds never weaken the bound.
  for (std::uint64_t n = 1; n < 2'000; ++n) CHECK(bound_ppm(n + 1) <= bound_ppm(n));
}

TEST_CASE("the sentence a reader can sign, for a clean search and for one that broke") {
  evidence e;
  e.seeds = 1'000;
  CHECK(e.statement() ==
        "no violation in 1,000 seeds: a defect that strikes more than 1 seed in 334 would have shown with 95% confidence");
  e.seeds = 1;
  CHECK(e.statement() == "no violation in 1 seed: a defect that strikes more than 95.0% of seeds would have shown with 95% confidence");
  e.seeds = 0;
  CHECK(e.statement() == "no seed ran to its end: nothing is known");
  e.seeds = 300;
  e.violating = 8;
  e.first_violating_seed = 12;
  CHECK(e.statement() == "8 of 300 seeds broke an invariant, the first seed 12");
  e.first_violating_seed.reset();  // a broken invariant of ours: a violation without its first seed
  CHECK_THROWS(e.statement());
}

TEST_CASE("evidence in JSON: every fault kind counted, the bound only while nothing broke, read back whole") {
  evidence e;
  e.seeds = 300;
  e.faults[static_cast<std::size_t>(admit::scenario::fault_kind::pause)] = 33;
  e.faults[static_cast<std::size_t>(admit::scenario::fault_kind::crash)] = 120;
  CHECK(e.faults_text() == "crash 120, pause 33");
  const auto j = e.to_json();
  CHECK(j["bound_95_ppm"] == 9'937);
  CHECK(j["one_seed_in"] == 100);
  CHECK(j["faults_injected"].size() == admit::scenario::fault_kind_count);
  CHECK(j["faults_injected"]["redis_restart"] == 0);
  const evidence back = evidence::from_json(j);
  CHECK(back.to_json() == j);

  auto broken = j;
  broken["violating"] = 301;
  CHECK_THROWS_AS(evidence::from_json(broken), evidence_error);
  broken = j;
  broken["first_violating_seed"] = 4;  // a first violating seed, though none broke
  try {
    (void)evidence::from_json(broken);
    FAIL("accepted a first violating seed with no violation");
  } catch (const evidence_error& err) {
    CHECK(err.path == "/first_violating_seed");
  }
  broken = j;
  broken["faults_injected"].erase("pause");
  try {
    (void)evidence::from_json(broken);
    FAIL("accepted evidence without a fault kind");
  } catch (const evidence_error& err) {
    CHECK(err.path == "/faults_injected/pause");
  }
}

TEST_CASE("two shards' evidence is the search's: counts summed, the first violating seed the least") {
  evidence a, b;
  a.seeds = 50;
  a.violating = 1;
  a.first_violating_seed = 9;
  a.faults[0] = 3;
  b.seeds = 50;
  b.violating = 2;
  b.first_violating_seed = 4;
  b.faults[0] = 5;
  a.merge(b);
  CHECK((a.seeds == 100 && a.violating == 3 && a.first_violating_seed == 4u && a.faults[0] == 8));
}

TEST_CASE("a matrix cell says what it rests on: held in N with its bound, broke in K of N with the first seed") {
  admit::reports::matrix_table t;
  t.file = "m.json";
  t.seeds = 300;
  t.designs = {{"d", ""}};
  t.faults = {{"f", "fault", ""}, {"g", "fault", ""}};
  t.cells.resize(2);
  t.cells[0].status = admit::reports::cell_status::holds;
  t.cells[0].seeds_run = 300;
  t.cells[0].ev.seeds = 300;
  t.cells[1].status = admit::reports::cell_status::breaks;
  t.cells[1].seeds_run = 300;
  t.cells[1].seeds_violating = 8;
  t.cells[1].ev.seeds = 300;
  t.cells[1].ev.violating = 8;
  t.cells[1].ev.first_violating_seed = 12;
  const std::string md = admit::reports::render_matrix_markdown(t);
  CHECK(md.find("| d | held in 300 (≤1.0%) | **breaks** 8/300, seed 12 |") != std::string::npos);
  CHECK(md.find("holds") == std::string::npos);  // never a bare "holds"
  const std::string html = admit::reports::render_matrix_html(t);
  CHECK(html.find("held in 300 seeds") != std::string::npos);
  CHECK(html.find("at most 1.0% of seeds (95%)") != std::string::npos);
  const std::string junit = admit::reports::render_matrix_junit(t);
  CHECK(junit.find("no violation in 300 seeds: a defect that strikes more than 1 seed in 100") != std::string::npos);
}

TEST_CASE("--until-bound: the seeds a share needs, and the shares it reads") {
  using admit::reports::parse_share_ppm;
  using admit::reports::seeds_for_bound;
  CHECK(seeds_for_bound(10'000) == 299);  // 1%: 299 clean seeds bound a defect below 1.0%
  CHECK(bound_ppm(299) < 10'000);
  CHECK(bound_ppm(298) >= 10'000);
  CHECK(seeds_for_bound(50'000) == 59);
  CHECK(seeds_for_bound(500'000) == 5);
  CHECK(parse_share_ppm("1%") == 10'000u);
  CHECK(parse_share_ppm("0.5%") == 5'000u);
  CHECK(parse_share_ppm("0.01") == 10'000u);
  CHECK(parse_share_ppm("50%") == 500'000u);
  CHECK(parse_share_ppm("0.001%") == 10u);
  for (const char* bad : {"", "%", "0", "0%", "51%", "1.5", "-1%", "1e-2", "abc", ".", "0.0000001", "0.0005%", "100%"})
    CHECK_FALSE(parse_share_ppm(bad));
}
