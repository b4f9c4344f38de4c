// Helpers shared by the explore tests: files of the source tree, the
// catalogue, and one run's outcome as comparable bytes.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/report.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/world.hpp"

namespace admit::test {

inline std::string source_path(const std::string& relative) { return std::string(ADMITSIM_SOURCE_DIR) + "/" + relative; }

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The *.json files of a folder of the source tree (not schema.json), sorted.
inline std::vector<std::string> json_files(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source_path(folder)))
    if (e.path().extension() == ".json" && e.path().filename() != "schema.json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The report of the runs of `sc` with `seed`, without the scenario section:
// two scenarios that run alike give the same bytes.
inline std::string outcome_bytes(const scenario::scenario& sc, std::uint64_t seed) {
  const auto runs = world::run_all(sc, seed);
  reports::report_input in;
  in.sc = &sc;
  in.file = "same.json";
  in.sha256 = "same";
  for (const auto& r : runs) in.runs.push_back(&r);
  auto report = reports::build_report(in);
  report.erase("scenario");
  return reports::render_report(report);
}

// The catalogue's scenario scenarios/NAME.json, loaded from its text.
inline scenario::scenario catalogue(const std::string& name) {
  return scenario::load_scenario_text(read_bytes(source_path("scenarios/" + name + ".json")));
}

// The catalogue's scenario scenarios/NAME.json, read as admitsim reads a file (its protocol files beside it).
inline scenario::scenario catalogue_file(const std::string& name) {
  return scenario::load_scenario_file(source_path("scenarios/" + name + ".json"));
}

}  // namespace admit::test
