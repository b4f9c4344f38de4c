// The scenario writer against the loader: every scenario of the catalogue,
// of docs/scenarios.md and of the mutant matrix survives the round trip.
#include <catch2/catch.hpp>

#include "sim/explore/scenario_json.hpp"
#include "sim/scenario/duration.hpp"
#include "tests/explore/explore_test_support.hpp"
#include "tests/scenario/json_schema_subset.hpp"

namespace {

using json = nlohmann::ordered_json;
using admit::explore::duration_text;
using admit::explore::render_scenario;
using admit::explore::scenario_to_json;
using admit::explore::signed_duration_text;

// The bodies of the ```json blocks of a Markdown file.
std::vector<std::string> json_blocks(const std::string& text) {
  std::vector<std::string> blocks;
  const std::string open = "```json\n";
  std::size_t at = 0;
  while ((at = text.find(open, at)) != std::string::npos) {
    const std::size_t body = at + open.size();
    const std::size_t end = text.find("\n```", body);
    REQUIRE(end != std::string::npos);
    blocks.push_back(text.substr(body, end - body + 1));
    at = end + 4;
  }
  return blocks;
}

// Written, loaded back, written again: the same document, and the loaded scenario runs as the original.
void check_round_trip(const admit::scenario::scenario& sc, bool run_both) {
  const std::string once = render_scenario(sc);
  admit::scenario::scenario back;
  REQUIRE_NOTHROW(back = admit::scenario::load_scenario_text(once));
  CHECK(render_scenario(back) == once);
  if (run_both) CHECK(admit::test::outcome_bytes(back, sc.seed) == admit::test::outcome_bytes(sc, sc.seed));
}

void check_round_trip(const std::string& text, bool run_both) {
  check_round_trip(admit::scenario::load_scenario_text(text), run_both);
}

}  // namespace

TEST_CASE("durations are written exactly and read back", "[explore][json]") {
  // Goal: no time changes on the way through a file. Method: spellings of awkward values, parsed back.
  CHECK(duration_text(0) == "0ms");
  CHECK(duration_text(350'000'000) == "350ms");
  CHECK(duration_text(120'000'000'000) == "2m");
  CHECK(duration_text(1'234'567'891) == "1.234567891s");
  CHECK(duration_text(1'500'001) == "1.500001ms");
  CHECK(duration_text(2'500) == "2.5us");
  CHECK(duration_text(17) == "17ns");
  CHECK(signed_duration_text(-250'000'000) == "-250ms");
  CHECK(signed_duration_text(2'000'000'001) == "+2.000000001s");
  for (std::int64_t v : {1LL, 999LL, 1'000LL, 1'001LL, 999'999'999LL, 1'000'000'001LL, 86'399'999'999'999LL}) {
    INFO(v);
    CHECK(admit::scenario::parse_duration_ns(duration_text(v)) == v);
    CHECK(admit::scenario::parse_signed_duration_ns(signed_duration_text(-v)) == -v);
  }
}

TEST_CASE("every catalogue scenario survives the writer and runs the same", "[explore][json][heavy]") {
  // Goal: the writer is the loader's inverse. Method: write, load, write again; compare the documents and the
  // reports of both runs (bench scenarios are only compared as documents: they are long).
  const admit::test::schema_subset_validator validator(
      json::parse(admit::test::read_bytes(admit::test::source_path("scenarios/schema.json"))));
  const auto files = admit::test::json_files("scenarios");
  REQUIRE(files.size() >= 10);
  for (const auto& f : files) {
    INFO(f);
    const auto sc = admit::scenario::load_scenario_file(f);  // with the protocol files it names
    check_round_trip(sc, f.find("/bench_") == std::string::npos);
    // What the writer writes is valid against the schema too.
    CHECK(validator.validate(scenario_to_json(sc)).value_or("") == "");
  }
}

TEST_CASE("every example of docs/scenarios.md survives the writer", "[explore][json]") {
  // Goal: every feature of the format round-trips, not only those the catalogue uses. Method: each ```json block.
  const auto blocks = json_blocks(admit::test::read_bytes(admit::test::source_path("docs/scenarios.md")));
  REQUIRE(blocks.size() >= 11);
  for (const auto& b : blocks) {
    INFO(b);
    check_round_trip(b, false);
  }
}

TEST_CASE("every mutant scenario survives the writer", "[explore][json]") {
  // Goal: mutations (fifo core and driver) are written back. Method: the mutant matrix's files.
  const auto files = admit::test::json_files("tests/explore/mutants");
  REQUIRE(files.size() >= 8);
  for (const auto& f : files) {
    INFO(f);
    check_round_trip(admit::test::read_bytes(f), true);
  }
}

TEST_CASE("every process gate example survives the writer and runs the same", "[explore][json]") {
  // Goal: a process gate is written back whole (command, cwd, name, message_timeout): a shrunk
  // counterexample runs the same child. Method: examples/python_gate's scenarios, written, loaded, run.
  const auto files = admit::test::json_files("examples/python_gate");
  REQUIRE(files.size() >= 3);
  for (const auto& f : files) {
    INFO(f);
    const auto sc = admit::scenario::load_scenario_file(f);
    REQUIRE(sc.gates.front().process.has_value());
    check_round_trip(sc, true);
    const json written = scenario_to_json(sc);
    const json& gate = written.contains("gates") ? written["gates"][0] : written["gate"];
    CHECK(gate["process"]["cwd"].get<std::string>().front() == '/');
  }
}
