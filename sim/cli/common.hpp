// common: what the verbs of the admitsim command share besides their exit
// codes and errors (errors.hpp): how a finding is named on stderr (a summary
// file writes it through sim/explore/search_summary.hpp).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/cli/errors.hpp"
#include "sim/explore/explorer.hpp"

namespace admit::cli {

// "[variant]" after a scenario's name, or nothing for a FIFO run.
inline std::string variant_label(const std::string& variant) {
  return variant.empty() ? std::string() : "[" + variant + "]";
}

}  // namespace admit::cli
