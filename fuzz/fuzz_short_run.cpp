// fuzz_short_run: a fuzzed scenario with a fuzzed seed, run to its report.
//
// Goal: every scenario the loader accepts runs to a report, under any seed,
// without a crash, an internal assertion, a sanitizer report or a hang, and
// the report replays byte for byte. Method: the first 8 bytes are the seed
// (little-endian; shorter inputs are padded with zeros), the rest is the
// scenario text. A scenario_error ends the input (that is the CLI's exit 2),
// and so does the world's std::invalid_argument for a combination it does
// not run, which the CLI also turns into exit 2.
// A scenario with a process gate is loaded, not run: a fuzzed command line
// is never executed.
// An accepted document is bounded (fuzz_support.hpp: at most 200,000 events,
// an hour of virtual time, 1,000 requests per generator) and validated
// again, then run with the seed (world::run_all: one run, or one per lease
// variant) and rendered as `admitsim run` renders it.
// Then it is run a second time from the document as the report embeds it,
// as `admitsim replay` does when the file has moved, and the two reports
// must be the same bytes: this checks determinism within one process
// (allocation addresses differ between the two runs) and replay fidelity.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "gate/admit_assert.hpp"
#include "gate/fifo/fifo_gate.hpp"
#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/world/world.hpp"

namespace {

constexpr const char* target = "fuzz_short_run";
constexpr const char* file_name = "fuzz.json";

using admit::fuzz::finding;
using admit::fuzz::json;

// The report as `admitsim run` renders it, or nothing when the world
// refuses the scenario the way the CLI turns into exit 2.
std::optional<std::string> run_to_report(const admit::scenario::scenario& sc, const json& doc, const std::string& sha,
                                         std::uint64_t seed) {
  std::vector<admit::world::run_record> runs;
  try {
    runs = admit::world::run_all(sc, seed);
  } catch (const admit::fifo::config_error& e) {
    // The gate's own check refused what the loader accepted: the loader must
    // reject it first, with the value's JSON path.
    finding(target, std::string("the loader accepted a gate configuration the FIFO gate refuses: ") + e.what());
  } catch (const std::invalid_argument& e) {
    // A combination no world runs; the CLI prints "FILE: " + what() and
    // exits 2, so what() must start with a JSON path and be one line.
    const std::string_view what = e.what();
    if (what.empty() || what.front() != '/' || what.find('\n') != std::string_view::npos)
      finding(target, "the world refused the scenario without a one-line JSON path: " + std::string(what));
    return std::nullopt;
  }
  if (runs.empty()) finding(target, "run_all returned no run");
  admit::reports::report_input in;
  in.sc = &sc;
  in.source = &doc;
  in.file = file_name;
  in.sha256 = sha;
  for (const auto& r : runs) in.runs.push_back(&r);
  std::string bytes = admit::reports::render_report(admit::reports::build_report(in));
  for (const auto& r : runs) (void)admit::reports::as_expected(sc, r);
  return bytes;
}

std::string first_difference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i > 40 ? i - 40 : 0;
  return "at byte " + std::to_string(i) + ": \"" + a.substr(from, 80) + "\" vs \"" + b.substr(from, 80) + "\"";
}

void one_input(const std::uint8_t* data, std::size_t size) {
  std::uint8_t seed_bytes[8] = {};
  const std::size_t n = size < 8 ? size : 8;
  if (n > 0) std::memcpy(seed_bytes, data, n);
  std::uint64_t seed = 0;
  for (int i = 7; i >= 0; --i) seed = (seed << 8) | seed_bytes[i];
  const std::string_view text(reinterpret_cast<const char*>(data) + n, size - n);

  try {
    (void)admit::scenario::load_scenario_text(text);
  } catch (const admit::scenario::scenario_error& e) {
    admit::fuzz::check_error_message(target, e);
    return;
  }
  json doc = json::parse(text);
  admit::fuzz::bound_for_fuzzing(doc);
  admit::scenario::scenario sc;
  try {
    sc = admit::scenario::load_scenario_json(doc);
  } catch (const admit::scenario::scenario_error&) {
    return;  // the bounds broke a cross-field rule (a case naming a trimmed request): not a run
  }
  // A gate whose core is a child process names a program to run: the fuzzer loads such a
  // scenario (above) but runs no program it made up (tests/world/process_gate_test.cpp runs them).
  for (const auto& g : sc.gates)
    if (g.process) return;
  const std::string sha = admit::reports::sha256_hex(doc.dump(2));
  const std::optional<std::string> first_run = run_to_report(sc, doc, sha, seed);
  if (!first_run) return;
  const std::string& first = *first_run;

  json report;
  try {
    report = json::parse(first);
  } catch (const std::exception& e) {
    finding(target, std::string("the report is not JSON: ") + e.what());
  }
  if (!report.is_object() || report.value("format", "") != admit::reports::report_format)
    finding(target, "the report has no /format");

  const std::string embedded = report["scenario"]["source"].dump(2);
  admit::scenario::scenario again;
  try {
    again = admit::scenario::load_scenario_text(embedded);
  } catch (const admit::scenario::scenario_error& e) {
    finding(target, std::string("the report's embedded scenario does not load: ") + e.what());
  }
  const json doc_again = json::parse(embedded);
  const std::optional<std::string> second_run = run_to_report(again, doc_again, sha, seed);
  if (!second_run) finding(target, "the world refused the report's embedded scenario but ran the original");
  const std::string& second = *second_run;
  if (first != second)
    finding(target, "seed " + std::to_string(seed) + ": the replayed report differs " + first_difference(first, second));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    one_input(data, size);
  } catch (const admit::assertion_failure& e) {
    finding(target, std::string("internal assertion: ") + e.what());
  } catch (const std::exception& e) {
    finding(target, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    finding(target, "unexpected exception of an unknown type");
  }
  return 0;
}
