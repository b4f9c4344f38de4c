// The codecs beside the matrix cell and the run report: a real matrix summary's cells and a real
// report's header read back and written again give the same JSON, and a malformed one is refused
// at its JSON path. Method: tests/fixtures/matrix/small-matrix.json (the small matrix of
// tests/cli/matrix_cli_test.sh, two cells broken and shrunk) and reports/examples/lab_fifo.json.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <sstream>

#include "sim/codec/json_codec.hpp"
#include "reports/matrix_report.hpp"
#include "reports/report.hpp"

namespace {

using namespace admit;
using json = nlohmann::ordered_json;

json read_json(const std::string& relative) {
  std::ifstream in(std::string(ADMITSIM_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

}  // namespace

TEST_CASE("matrix_cell: every cell of a real summary reads back to the same JSON", "[reports][codec]") {
  const json doc = read_json("tests/fixtures/matrix/small-matrix.json");
  const json& cells = doc.at("cells");
  REQUIRE(cells.size() == 8);
  std::size_t with_counterexample = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string path = "/cells/" + std::to_string(i);
    INFO(path);
    const reports::matrix_cell c = reports::matrix_cell::from_json(cells[i], path);
    CHECK(codec::render_json(c.to_json()) == codec::render_json(cells[i]));
    with_counterexample += c.counterexample.has_value();
  }
  CHECK(with_counterexample == 2);  // the fixture reads the cells' nested objects too
}

TEST_CASE("matrix_cell: from_json refuses a malformed cell at its JSON path", "[reports][codec]") {
  const json doc = read_json("tests/fixtures/matrix/small-matrix.json");
  const auto refused = [&](const std::function<void(json&)>& edit) -> std::string {
    json cell = doc.at("cells").at(0);
    edit(cell);
    try {
      (void)reports::matrix_cell::from_json(cell, "/cells/0");
    } catch (const codec::codec_error& e) {
      return e.path;
    }
    return "accepted";
  };
  CHECK(refused([](json& c) { c.erase("status"); }) == "/cells/0/status");
  CHECK(refused([](json& c) { c["status"] = "wobbles"; }) == "/cells/0/status");
  CHECK(refused([](json& c) { c["seeds"]["violating"] = c["seeds"]["run"].get<std::uint64_t>() + 1; }) ==
        "/cells/0/seeds/violating");
  CHECK(refused([](json& c) { c["violation_rate_ppm"] = 7; }) == "/cells/0/violation_rate_ppm");
  CHECK(refused([](json& c) { c["time_over_cap"]["total_ns"] = -1; }) == "/cells/0/time_over_cap/total_ns");
  CHECK(refused([](json& c) { c["evidence"]["coverage"]["total"] = 1'000'000'000; }) == "/cells/0/evidence/coverage/total");
}

TEST_CASE("report_header: a real report's header, and replay's refusals", "[reports][codec]") {
  const json report = read_json("reports/examples/lab_fifo.json");
  const reports::report_header h = reports::report_header::from_json(report);
  CHECK_FALSE(h.gate_core.has_value());
  CHECK(h.scenario_name == "lab_fifo");
  // to_json is the report's first keys, the embedded source apart.
  json head = h.to_json();
  head["scenario"]["source"] = report["scenario"]["source"];
  std::size_t i = 0;
  for (const auto& [key, value] : head.items()) {
    REQUIRE(i < report.size());
    CHECK(std::next(report.begin(), static_cast<std::ptrdiff_t>(i)).key() == key);
    CHECK(report.at(key) == value);
    ++i;
  }
  const auto refused = [&](const std::function<void(json&)>& edit) -> std::string {
    json r = report;
    edit(r);
    try {
      (void)reports::report_header::from_json(r);
    } catch (const codec::codec_error& e) {
      return e.path + ": " + e.what();
    }
    return "accepted";
  };
  CHECK(refused([](json& r) { r["format"] = "x"; }) == "/format: expected \"admitsim-report/1\"");
  CHECK(refused([](json& r) { r["scenario"]["file"] = 3; }) ==
        "/scenario/file: expected a string (the scenario's file name), got a number");
  CHECK(refused([](json& r) { r.erase("seed"); }) == ": expected /scenario/source and /seed in the report");
  json core = report;
  core["gate_core"] = json{{"name", "theirs"}, {"origin", "own"}};
  CHECK(reports::report_header::from_json(core).gate_core == std::optional<std::string>("theirs"));
}
