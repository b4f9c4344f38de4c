// report: the JSON report of one run (format admitsim-report/1).
//
// The contract is documented in docs/report.md. Keys come in a fixed order
// (nlohmann::ordered_json, filled in a fixed sequence), every time is an
// integer of nanoseconds except the lab-shaped snapshots' `wait_seconds`,
// and nothing depends on the wall clock, so one scenario and one seed give
// the same bytes on every run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario.hpp"
#include "sim/world/run_record.hpp"

namespace admit::reports {

inline constexpr const char* report_format = "admitsim-report/1";
inline constexpr const char* execution_mode = "deterministic-virtual-clock-simulation";

struct report_input {
  const scenario::scenario* sc = nullptr;
  const nlohmann::ordered_json* source = nullptr;  // the scenario document, embedded for replay
  std::string file;                                // the path as given on the command line
  std::string sha256;                              // of the scenario file's bytes
  const world::run_record* rec = nullptr;     // a FIFO scenario's run
  std::vector<const world::run_record*> runs;  // or a lease scenario's runs, one per variant
};

// Whether the run's outcome is what the scenario's `expect` says (for a
// lease run, the expectation of its variant when the scenario gives one).
bool as_expected(const scenario::scenario& sc, const world::run_record& rec);

nlohmann::ordered_json build_report(const report_input& in);

// The report's bytes: 2-space indentation and a final newline.
std::string render_report(const nlohmann::ordered_json& report);

// The first keys of a run report: format, execution_mode, gate_core (only when a team's own core
// ran), scenario {name, file, sha256, then source}, seed. build_report writes them through
// to_json (the embedded source follows, as build_report appends it); `admitsim replay` reads them
// through from_json, which checks the report's scenario.source is there but leaves it in the
// document, and of a team's own core's report reads only the core's name (admitsim runs no such
// core). Throws codec_error (reports/json_codec.hpp); "" as its path when the error is about
// several keys at once.
struct report_header {
  std::optional<std::string> gate_core;  // the name of a team's own core ("" when the report names none)
  std::string scenario_name;
  std::string scenario_file;    // the path as given on the command line
  std::string scenario_sha256;  // of the scenario file's bytes
  std::uint64_t seed = 0;
  nlohmann::ordered_json to_json() const;
  static report_header from_json(const nlohmann::ordered_json& report);
};

// The lab-shaped snapshot object.
nlohmann::ordered_json snapshot_json(const fifo::snapshot& s);

// `word` as one word of a POSIX shell command: as it is when it holds only
// [A-Za-z0-9_./-] (and is not empty), else in single quotes, each ' as '\''.
// The replay commands a report or a search writes are pasted into shells.
std::string shell_quote(const std::string& word);

// The command that re-runs `file` with `seed`, as a report's "replay" gives it.
inline std::string replay_command(const std::string& file, std::uint64_t seed) {
  return "admitsim run " + shell_quote(file) + " --seed " + std::to_string(seed);
}

}  // namespace admit::reports
