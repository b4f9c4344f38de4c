// The matrix's loader, its combination of fault columns and its verdict, and the JUnit writer
// (docs/matrix.md). Goal: the rules docs/matrix.md states, each on the smallest matrix that shows
// it. Method: matrix files as text, loaded in-process; the writers on hand-built tables.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "reports/junit.hpp"
#include "reports/matrix_report.hpp"
#include "sim/explore/matrix.hpp"
#include "sim/scenario/fault_kinds.hpp"
#include "sim/scenario/json_path_error.hpp"

namespace {

using admit::explore::load_matrix;
using admit::scenario::fault_kind;

const char* base = R"({"name": "b", "gate": {"kind": "lease", "limit": 2, "lease": "10s"}, "fleet": {"workers": 3},
  "workload": {"arrivals": [{"kind": "constant", "count": 5, "every": "1s"}]}})";

std::string matrix(const std::string& faults, const std::string& designs = R"([{"name": "s", "variant": "seed"}])") {
  return R"({"format": "admitsim-matrix/1", "name": "m", "scenario": )" + std::string(base) + R"(, "designs": )" +
         designs + R"(, "faults": )" + faults + "}";
}

admit::explore::matrix_spec load(const std::string& text) {
  return load_matrix(text, "m.json", [](const std::string& p) -> std::string { throw std::runtime_error(p + ": no file"); });
}

std::string refusal(const std::string& text) {
  try {
    (void)load(text);
  } catch (const admit::scenario::scenario_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("matrix: the baseline, the file's columns and all_faults, row-major") {
  const auto spec = load(matrix(R"([{"name": "a", "faults": {"rates": {"crash_per_hour": 60, "until": "10s"}}},
                                    {"name": "b", "faults": {"rates": {"crash_per_hour": 100, "pause_per_hour": 30, "until": "10s"}}}])",
                                R"([{"name": "s", "variant": "seed"}, {"name": "t", "variant": "server_time"}])"));
  REQUIRE(spec.table.faults.size() == 4);
  CHECK(spec.table.faults[0].name == "none");
  CHECK(spec.table.faults[3].name == "all_faults");
  REQUIRE(spec.cells.size() == 8);
  CHECK(spec.cells[5].design == 1);
  CHECK(spec.cells[5].fault == 1);
  CHECK(spec.cells[5].sc.name == "t.a");
  CHECK(spec.cells[5].sc.expect.verdict == "pass");
  CHECK_FALSE(spec.cells[0].sc.faults.rates.has_value());
  // Rates of one kind sum: two Poisson processes of one kind are one of the summed rate.
  const auto& all = spec.cells[3].sc.faults.rates;
  REQUIRE(all.has_value());
  CHECK(all->per_hour_of(fault_kind::crash) == 160);
  CHECK(all->per_hour_of(fault_kind::pause) == 30);
}

TEST_CASE("matrix: schedules concatenate in column order, and a shared parameter only its readers must agree on") {
  const auto spec = load(matrix(R"([{"name": "a", "faults": {"schedule": [{"at": "2s", "kind": "crash", "target": "worker:1"}]}},
      {"name": "b", "faults": {"schedule": [{"at": "1s", "kind": "crash", "target": "worker:2"}],
                               "rates": {"clock_step_per_hour": 60, "max_step": "20s", "until": "10s"}}},
      {"name": "c", "faults": {"rates": {"pause_per_hour": 60, "until": "10s"}}}])"));
  const auto& all = spec.cells.back().sc.faults;
  REQUIRE(all.schedule.size() == 2);
  CHECK(all.schedule[0].at_ns == 2'000'000'000);  // column a's first
  REQUIRE(all.rates.has_value());
  CHECK(all.rates->max_step_ns == 20'000'000'000);  // only clock steps read it: the pause column's default does not clash
  // until is read by every drawn kind: two values cannot be one rates object.
  const std::string why = refusal(matrix(R"([{"name": "a", "faults": {"rates": {"crash_per_hour": 60, "until": "10s"}}},
                                             {"name": "b", "faults": {"rates": {"pause_per_hour": 60, "until": "20s"}}}])"));
  CHECK(why.rfind("/faults/1/faults/rates/until: cannot be combined with /faults/0/faults/rates/until", 0) == 0);
  // mean_duration likewise, its default filled in where a column leaves it out.
  CHECK(refusal(matrix(R"([{"name": "a", "faults": {"rates": {"crash_per_hour": 60, "until": "10s"}}},
                          {"name": "b", "faults": {"rates": {"pause_per_hour": 60, "mean_duration": "1s", "until": "10s"}}}])"))
            .find("mean_duration is 5s there and 1s here") != std::string::npos);
  // Rates that sum above the bound.
  CHECK(refusal(matrix(R"([{"name": "a", "faults": {"rates": {"crash_per_hour": 3000, "until": "10s"}}},
                          {"name": "b", "faults": {"rates": {"crash_per_hour": 3000, "until": "10s"}}}])"))
            .find("together 6000 per hour") != std::string::npos);
  // With all_faults off, nothing is combined, so nothing is refused.
  const auto off = load(R"({"format": "admitsim-matrix/1", "name": "m", "all_faults": false, "scenario": )" + std::string(base) +
                        R"(, "designs": [{"name": "s", "variant": "seed"}], "faults": [
                          {"name": "a", "faults": {"rates": {"crash_per_hour": 60, "until": "10s"}}},
                          {"name": "b", "faults": {"rates": {"pause_per_hour": 60, "until": "20s"}}}]})");
  CHECK(off.cells.size() == 3);
}

TEST_CASE("matrix: a row's gate and service are merge patches; expectations by name override \"*\"") {
  const auto spec = load(matrix(R"([{"name": "p", "faults": {}}])",
                                R"([{"name": "r", "variant": "renewal", "gate": {"renew_every": "2s", "lease": "6s"},
                                     "service": {"over_cap": "serve"}, "holds": ["*"], "breaks": ["p"]}])"));
  REQUIRE(spec.cells.size() == 2);
  const auto& g = spec.cells[0].sc.gates.front().lease;
  CHECK(g.lease_ns == 6'000'000'000);
  CHECK(spec.cells[0].expected == std::optional<std::string>("holds"));
  CHECK(spec.cells[1].expected == std::optional<std::string>("breaks"));
  CHECK(refusal(matrix(R"([{"name": "p", "faults": {}}])", R"([{"name": "r", "variant": "seed", "holds": ["p"], "breaks": ["p"]}])"))
            .rfind("/designs/0/breaks/0: expected a column not named in both", 0) == 0);
  // A field the design's run does not read is refused, naming the design.
  CHECK(refusal(matrix(R"([])", R"([{"name": "x", "variant": "seed", "gate": {"renew_every": "2s"}}])"))
            .rfind("/designs/0: with the base scenario, the design's scenario is refused: /gate/renew_every:", 0) == 0);
}

TEST_CASE("matrix: a row's fleet is a merge patch too (the run_fleet worker model)") {
  // Goal: a design row can choose the worker model, and a bad fleet value is refused naming the row.
  // Method: load a matrix with a fleet patch, then with a bad value and a fleet that is not an object.
  const auto spec = load(matrix(R"([{"name": "p", "faults": {}}])",
                                R"([{"name": "rf", "variant": "server_time", "fleet": {"on_acquire_timeout": "requeue_and_exit"}}])"));
  REQUIRE(spec.cells.size() == 2);
  for (const auto& c : spec.cells)
    CHECK(c.sc.fleet.on_acquire_timeout == admit::scenario::acquire_timeout_policy::requeue_and_exit);
  CHECK(refusal(matrix(R"([])", R"([{"name": "x", "variant": "seed", "fleet": {"on_acquire_timeout": "quit"}}])"))
            .rfind("/designs/0: with the base scenario, the design's scenario is refused: /fleet/on_acquire_timeout:", 0) == 0);
  CHECK(refusal(matrix(R"([])", R"([{"name": "x", "variant": "seed", "fleet": 3}])"))
            .rfind("/designs/0/fleet: expected an object of fleet fields", 0) == 0);
}

TEST_CASE("matrix: an inconclusive or error cell is never as expected; an unmet expectation is exit 1") {
  using admit::reports::cell_status;
  admit::reports::matrix_table t;
  t.designs = {{"d", "variant seed"}};
  t.faults = {{"f", "fault", ""}, {"g", "fault", ""}};
  t.cells.resize(2);
  t.cells[0].design = t.cells[1].design = "d";
  t.cells[0].fault = "f";
  t.cells[1].fault = "g";
  t.cells[0].status = cell_status::breaks;
  t.cells[1].status = cell_status::holds;
  admit::explore::judge_matrix(t);
  CHECK(t.exit_code == 0);
  t.cells[1].status = cell_status::inconclusive;
  admit::explore::judge_matrix(t);
  CHECK(t.exit_code == 1);
  CHECK_FALSE(t.cells[1].as_expected);
  t.cells[1].status = cell_status::holds;
  t.cells[0].expected = "holds";
  admit::explore::judge_matrix(t);
  CHECK(t.exit_code == 1);
  REQUIRE(t.why.size() == 1);
  CHECK(t.why[0].find("d x f breaks, expected to hold") != std::string::npos);
}

TEST_CASE("junit: counts per suite and in all; any text escaped into well-formed XML") {
  using admit::reports::junit_case;
  admit::reports::junit_suite s{"m.d", {}};
  s.cases.push_back(junit_case{"m.d", "ok", junit_case::outcome::passed, "", "", std::nullopt});
  s.cases.push_back(junit_case{"m.d", "bad <one>", junit_case::outcome::failure, "a\x01" "b & \"c\" 'd'\n\xff", "line\ttwo", "out"});
  s.cases.push_back(junit_case{"m.d", "cut", junit_case::outcome::error, "limit", "", std::nullopt});
  const std::string x = admit::reports::render_junit("m", {s});
  CHECK(x.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"m\" tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\">", 0) == 0);
  CHECK(x.find("<testsuite name=\"m.d\" tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\">") != std::string::npos);
  CHECK(x.find("<failure message=\"a\\x01b &amp; &quot;c&quot; &apos;d&apos;&#10;\\xff\">line&#9;two</failure>") != std::string::npos);
  CHECK(x.find("name=\"bad &lt;one&gt;\"") != std::string::npos);
  CHECK(x.find("<testcase classname=\"m.d\" name=\"ok\"/>") != std::string::npos);
  for (const char c : x) CHECK((static_cast<unsigned char>(c) >= 0x20 || c == '\n'));
  // UTF-8 passes through; a lone continuation byte and an encoded surrogate do not.
  CHECK(admit::reports::xml_escape("×\x80\xed\xa0\x80") == "×\\x80\\xed\\xa0\\x80");
}

TEST_CASE("matrix markdown: one row per design, a pipe in a name cannot end a cell") {
  admit::reports::matrix_table t;
  t.file = "a|b.json";
  t.designs = {{"d", ""}};
  t.faults = {{"f", "fault", ""}};
  t.cells.resize(1);
  t.cells[0].status = admit::reports::cell_status::breaks;
  t.cells[0].seeds_run = 4;
  t.cells[0].seeds_violating = 1;
  t.cells[0].ev.seeds = 4;
  t.cells[0].ev.violating = 1;
  t.cells[0].ev.first_violating_seed = 2;
  const std::string md = admit::reports::render_matrix_markdown(t);
  CHECK(md.find("| d | **breaks** 1/4, seed 2 |") != std::string::npos);
  CHECK(md.find("a\\|b.json") != std::string::npos);
}
