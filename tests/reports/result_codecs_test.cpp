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

namespace {

// A confirmation as `admitsim matrix --confirm` writes it (reports/confirmation_record.hpp), its
// real run's figures made up: the codec and the writers read only its verdict, label and why.
reports::confirmation_record confirmed_on_redis() {
  reports::confirmation_record r;
  r.verdict = "confirmed";
  r.label = "confirmed on redis-server 7.0.15";
  r.time_scale = 0.1;
  r.detail = json::parse(R"({"simulated": {"verdict": "violation", "broken": ["portal_inflight_le_cap"]},
    "verdict": "confirmed", "as_expected": true,
    "why": "portal_inflight_le_cap broke on redis-server 7.0.15 in real run 1: peak 3 against 2 at 2981 ms",
    "real_runs": [{"redis_server": "7.0.15"}]})");
  return r;
}

}  // namespace

TEST_CASE("matrix_cell: a confirmed counterexample reads back, and every writer says how it went",
          "[reports][codec][confirm]") {
  const json doc = read_json("tests/fixtures/matrix/small-matrix.json");
  reports::matrix_cell cell = reports::matrix_cell::from_json(doc.at("cells").at(1), "/cells/1");
  REQUIRE(cell.counterexample.has_value());
  const std::string without = codec::render_json(cell.to_json());
  cell.counterexample->confirmation = confirmed_on_redis();
  CHECK(reports::confirmation_words(cell) == "broke (confirmed on redis-server 7.0.15)");

  // The JSON: the cell's words, then the record; read back to the same bytes; without a
  // confirmation the cell keeps the bytes it had.
  const json j = cell.to_json();
  const json& c = j.at("counterexample").at("confirmation");
  CHECK(c.at("words") == "broke (confirmed on redis-server 7.0.15)");
  CHECK(c.at("label") == "confirmed on redis-server 7.0.15");
  CHECK(c.at("verdict") == "confirmed");
  CHECK_FALSE(c.contains("interrupted"));
  CHECK(codec::render_json(reports::matrix_cell::from_json(j, "/cells/1").to_json()) == codec::render_json(j));
  reports::matrix_cell plain = cell;
  plain.counterexample->confirmation.reset();
  CHECK(codec::render_json(plain.to_json()) == without);

  // Interrupted: marked in the words and the JSON.
  reports::matrix_cell cut = cell;
  cut.counterexample->confirmation->verdict = "inconclusive";
  cut.counterexample->confirmation->label = "confirmation inconclusive";
  cut.counterexample->confirmation->interrupted = true;
  CHECK(reports::confirmation_words(cut) == "broke (confirmation inconclusive, interrupted)");
  CHECK(cut.to_json().at("counterexample").at("confirmation").at("interrupted") == true);

  // Every writer of the table carries the words.
  reports::matrix_table t;
  t.name = "small";
  t.file = "small.json";
  t.designs = {{"seed", "variant seed"}};
  t.faults = {{"clock_skew", "fault", "schedule: clock_step at 0ms"}};
  t.cells = {cell};
  for (const std::string& out : {reports::render_matrix_json(t), reports::render_matrix_markdown(t),
                                 reports::render_matrix_html(t), reports::render_matrix_junit(t)})
    CHECK(out.find("broke (confirmed on redis-server 7.0.15)") != std::string::npos);
  CHECK(reports::render_matrix_markdown(t).find("seed 0 broke (confirmed on redis-server 7.0.15)") != std::string::npos);
}

TEST_CASE("matrix_cell: from_json refuses a malformed confirmation at its JSON path", "[reports][codec][confirm]") {
  const json doc = read_json("tests/fixtures/matrix/small-matrix.json");
  reports::matrix_cell cell = reports::matrix_cell::from_json(doc.at("cells").at(1), "/cells/1");
  REQUIRE(cell.counterexample.has_value());
  cell.counterexample->confirmation = confirmed_on_redis();
  const json good = cell.to_json();
  const auto refused = [&](const std::function<void(json&)>& edit) -> std::string {
    json c = good;
    edit(c.at("counterexample").at("confirmation"));
    try {
      (void)reports::matrix_cell::from_json(c, "/cells/1");
    } catch (const codec::codec_error& e) {
      return e.path;
    }
    return "accepted";
  };
  const std::string at = "/cells/1/counterexample/confirmation";
  CHECK(refused([](json& c) { c["verdict"] = "maybe"; }) == at + "/verdict");
  CHECK(refused([](json& c) { c["label"] = "not confirmed in 1 real run"; }) == at + "/label");
  CHECK(refused([](json& c) { c["words"] = "broke (who knows)"; }) == at + "/words");
  CHECK(refused([](json& c) { c["time_scale"] = 0; }) == at + "/time_scale");
  CHECK(refused([](json& c) { c.erase("why"); }) == at + "/why");
  CHECK(refused([](json& c) { c["interrupted"] = "yes"; }) == at + "/interrupted");
}
