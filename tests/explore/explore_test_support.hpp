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
#include "sim/explore/seed_source.hpp"
#include "sim/world/fault_draw.hpp"
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

// Every drawn fault of a plan within the bounds of `base`'s fault model; "" when it is.
inline std::string outside_the_model(const scenario::scenario& base, const explore::seed_plan& p) {
  const scenario::fault_rates& b = *base.faults.rates;
  const world::fault_nodes nodes = world::nodes_of(base);
  constexpr sim::vtime_ns day = 24 * 3600 * sim::sec;
  for (const scenario::fault_spec& f : p.e.drawn) {
    const std::string at = " (seed " + std::to_string(p.seed) + ", fault at " + std::to_string(f.at_ns) + "ns)";
    if (b.per_hour_of(f.kind) <= 0) return "a kind the scenario does not draw" + at;
    if (f.at_ns < 0 || f.at_ns >= b.until_ns) return "a time outside [0, until)" + at;
    if (f.duration_ns) {
      if (*f.duration_ns < 1 || *f.duration_ns > day) return "a length outside 1ns..24h" + at;
      if (nodes.heal_by_ns && f.at_ns + *f.duration_ns > *nodes.heal_by_ns) return "a fault past the liveness horizon" + at;
    }
    if (f.kind == scenario::fault_kind::clock_step && (f.step_ns == 0 || f.step_ns > b.max_step_ns || -f.step_ns > b.max_step_ns))
      return "a clock step of 0 or above max_step" + at;
    for (const auto* n : {f.target ? &*f.target : nullptr, f.between ? &f.between->first : nullptr})
      if (n && n->k == scenario::node_ref::kind::worker && (n->worker < 0 || n->worker >= nodes.workers))
        return "a worker the fleet does not have" + at;
  }
  if (p.e.sc.seed != p.run_seed) return "a scenario whose seed is not the run seed";
  if (p.e.sc.faults.rates) return "a scenario that still has rates";
  return "";
}

}  // namespace admit::test
