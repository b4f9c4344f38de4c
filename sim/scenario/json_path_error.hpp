// scenario_error: a rejected input, with the JSON path of the bad value.
#pragma once

#include <stdexcept>
#include <string>

namespace admit::scenario {

class scenario_error : public std::runtime_error {
 public:
  scenario_error(std::string json_path, const std::string& what_expected)
      : std::runtime_error(json_path + ": " + what_expected), path(std::move(json_path)) {}
  std::string path;  // JSON Pointer ("/faults/2/at"); "/" is the whole document
};

}  // namespace admit::scenario
