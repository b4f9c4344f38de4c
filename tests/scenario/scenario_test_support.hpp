// Helpers shared by the scenario tests: files of the source tree, and
// loading a scenario from a JSON literal.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/scenario/loader.hpp"

namespace admit::test {

inline std::string source_path(const std::string& relative) { return std::string(ADMITSIM_SOURCE_DIR) + "/" + relative; }

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline nlohmann::ordered_json read_json(const std::string& path) { return nlohmann::ordered_json::parse(read_bytes(path)); }

// The message a document is rejected with, or "" if it loads.
inline std::string rejection(const std::string& text) {
  try {
    (void)scenario::load_scenario_text(text);
  } catch (const scenario::scenario_error& e) {
    return e.what();
  }
  return "";
}

// The same for a scenario file, with the protocol files it names.
inline std::string file_rejection(const std::string& path) {
  try {
    (void)scenario::load_scenario_file(path);
  } catch (const scenario::scenario_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace admit::test
