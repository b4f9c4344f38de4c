// loader: scenario JSON text -> typed scenario, or one scenario_error.
//
// Validation is strict: unknown keys, wrong types, out-of-range numbers and
// dangling references are all errors, each reported with the JSON Pointer of
// the offending value and what was expected there, e.g.
//   /gates/0/max_active: expected an integer from 1 to 1000000, got 0
// The first error wins; nothing is partially loaded.
#pragma once

#include "sim/scenario/protocol_loader.hpp"

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/scenario/json_path_error.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::scenario {

// Parses and validates. Throws scenario_error.
scenario load_scenario_text(std::string_view text);
// The same, keeping the parsed document in `doc` (what the CLI embeds in a
// report), so that a caller that needs both parses the text once.
scenario load_scenario_text(std::string_view text, nlohmann::ordered_json& doc);
// Where the files a scenario names (its lease protocols) are read from: a
// command given a scenario file passes its directory and a bounded reader;
// without a reader, a protocol named by path is refused.
struct load_files {
  std::string base_dir;
  file_reader read;
};
// The same, reading the protocol files the scenario names and putting them
// inline in `doc` (sim/scenario/protocol_loader.hpp).
scenario load_scenario_text(std::string_view text, nlohmann::ordered_json& doc, const load_files& files);

// Makes every process gate's "cwd" in `doc` absolute, relative to
// `base_dir` (the scenario file's folder; "" for the current directory).
void absolute_process_cwds(nlohmann::ordered_json& doc, const std::string& base_dir);

// Reads regular files only, of at most `limit` bytes (what tests and tools
// use; the CLI has its own, sim/cli/read_file.hpp, with its messages).
file_reader plain_file_reader(std::size_t limit = std::size_t{256} << 20);
// The scenario file at `path` and the protocol files it names (relative to its directory).
scenario load_scenario_file(const std::string& path, nlohmann::ordered_json& doc);
scenario load_scenario_file(const std::string& path);
// The same, from an already parsed document.
scenario load_scenario_json(const nlohmann::ordered_json& doc);

// `s` with every byte outside printable ASCII as \xNN, as the loader's
// messages quote input: for text from a file that goes to a terminal.
std::string printable(std::string_view s);

}  // namespace admit::scenario
