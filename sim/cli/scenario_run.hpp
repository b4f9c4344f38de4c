// scenario_run: what the verbs that run scenarios share: a scenario file
// loaded (its bytes, its JSON, the typed scenario) and one seed of it run
// into its report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/check/trace_sink.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/run_record.hpp"

namespace admit::cli {

struct loaded {
  std::string file;
  std::string bytes;
  nlohmann::ordered_json doc;
  scenario::scenario sc;
  loaded() = default;
  loaded(loaded&&) = default;
  loaded& operator=(loaded&&) = default;
  // nlohmann's destructor allocates; this one only frees (also while a bad_alloc unwinds).
  ~loaded() { scenario::dismantle_json(doc); }
};

// `bytes` as the scenario `file`, validated (input_error, errors.hpp, when not).
loaded load_text(const std::string& file, std::string bytes);
// The scenario file read by read_file.hpp, validated.
loaded load_file(const std::string& file);

struct run_output {
  std::string report_bytes;
  std::string html_bytes;  // only when asked for
  bool met = false;
  std::vector<world::run_record> runs;
  std::vector<double> wall_s;  // per run
};

// Every run of `l` with `seed` (one per lease variant), its report, and its
// HTML page when `html`; every trace entry of every run also to `trace_to`.
// An internal assertion is a run_error naming the seed and the replay
// command; a world's refusal an input_error.
run_output run_one(const loaded& l, std::uint64_t seed, bool html = false, check::trace_sink* trace_to = nullptr);

}  // namespace admit::cli
