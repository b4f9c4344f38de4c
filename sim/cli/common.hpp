// common: what the verbs of the admitsim command share besides their exit
// codes and errors (errors.hpp): how a finding is written (in a summary file
// and on stderr).
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

// One broken invariant as the explore summaries write it.
// Its causes: the run's per-cause counts, most first, each with its first sentence.
inline nlohmann::ordered_json break_json(const explore::invariant_break& b) {
  nlohmann::ordered_json j;
  j["invariant"] = b.name;
  j["at_ns"] = b.at_ns;
  j["detail"] = b.detail;
  // Why, as the run's report says it (check::invariant_result::causes): most first.
  nlohmann::ordered_json causes = nlohmann::ordered_json::array();
  for (const check::cause_count& c : b.causes)
    causes.push_back(nlohmann::ordered_json{{"kind", c.kind}, {"count", c.count}, {"example", c.example}});
  j["causes"] = std::move(causes);
  return j;
}

}  // namespace admit::cli
