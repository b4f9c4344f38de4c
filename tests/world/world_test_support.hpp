// Helpers shared by the world tests: load a scenario from the repository or
// from text, run it, and render its report exactly as the CLI does.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/world.hpp"

namespace admit::test {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct rendered {
  world::run_record rec;                 // the first run
  std::vector<world::run_record> runs;   // every run (one per lease variant)
  nlohmann::ordered_json report;
  std::string bytes;
};

// `base`: the folder a scenario's relative paths (protocol files, a process's cwd) are read from; by
// default the file's own, and none for inline text.
inline rendered run_text(const std::string& text, std::uint64_t seed, const std::string& file = "inline.json",
                         const std::string& base = "") {
  // A file's protocol paths are read relative to it, as the CLI reads them.
  nlohmann::ordered_json doc;
  const scenario::scenario sc =
      !base.empty()           ? scenario::load_scenario_text(text, doc, {base, scenario::plain_file_reader()})
      : file == "inline.json" ? scenario::load_scenario_text(text, doc)
                              : scenario::load_scenario_text(text, doc, {scenario::directory_of(file), scenario::plain_file_reader()});
  rendered r;
  r.runs = world::run_all(sc, seed);
  r.rec = r.runs.front();
  reports::report_input in;
  in.sc = &sc;
  in.source = &doc;
  in.file = file;
  in.sha256 = reports::sha256_hex(text);
  for (const auto& run : r.runs) in.runs.push_back(&run);
  r.report = reports::build_report(in);
  r.bytes = reports::render_report(r.report);
  return r;
}

inline rendered run_file(const std::string& path, std::uint64_t seed) { return run_text(slurp(path), seed, path); }

// A scenario document's runs and report, its relative paths read from the repository's root.
inline rendered run_doc_rendered(const nlohmann::ordered_json& doc, std::uint64_t seed) {
  return run_text(doc.dump(2), seed, "inline.json", ".");
}

// The runs of a scenario document (protocol files, if named, read relative to the repository's root).
inline std::vector<world::run_record> run_doc(const nlohmann::ordered_json& doc, std::uint64_t seed) {
  nlohmann::ordered_json parsed;
  const scenario::scenario sc = scenario::load_scenario_text(doc.dump(2), parsed, {".", scenario::plain_file_reader()});
  return world::run_all(sc, seed);
}

// The runs of a scenario document at the seed it names (`seed`, default 0).
inline std::vector<world::run_record> run_at_doc_seed(const nlohmann::ordered_json& doc,
                                                      const world::lease_run_options& opts = {}) {
  nlohmann::ordered_json parsed;
  const scenario::scenario sc = scenario::load_scenario_text(doc.dump(2), parsed, {".", scenario::plain_file_reader()});
  return world::run_all(sc, doc.value("seed", std::uint64_t{0}), opts);
}

// `report` without its `diagnostics` objects (the run's, or each variant's): what the kernel did to
// produce a run, which a faster kernel changes without changing the run. The golden tests compare
// reports this way; `admitsim replay` compares the whole bytes, diagnostics included.
inline nlohmann::ordered_json without_diagnostics(nlohmann::ordered_json report) {
  report.erase("diagnostics");
  if (const auto v = report.find("variants"); v != report.end() && v->is_object())
    for (auto& run : *v) run.erase("diagnostics");
  return report;
}

// The result of the invariant `name` in a run; fails the test when the run has none of that name.
inline const world::invariant_result& inv(const world::run_record& rec, const std::string& name) {
  for (const auto& i : rec.invariants)
    if (i.name == name) return i;
  FAIL("no invariant " << name);
  return rec.invariants.front();
}

// Whether a run's portal_inflight_le_cap held.
inline bool portal_held(const world::run_record& rec) { return inv(rec, "portal_inflight_le_cap").holds; }

}  // namespace admit::test
