// common: what the verbs of the admitsim command share: their exit codes and
// how a finding is written (in a summary file and on stderr).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/explore/explorer.hpp"

namespace admit::cli {

// Exit codes of every verb (README.md).
inline constexpr int exit_as_expected = 0;   // every run came out as its scenario expects
inline constexpr int exit_not_expected = 1;  // at least one did not (or a replay differed)
inline constexpr int exit_bad_input = 2;     // bad input or usage; nothing passed off as complete

// Bad input or usage: carries the one line the verb prints ("admitsim: " + message), then exits 2.
struct input_error {
  std::string message;
};

// "[variant]" after a scenario's name, or nothing for a FIFO run.
inline std::string variant_label(const std::string& variant) {
  return variant.empty() ? std::string() : "[" + variant + "]";
}

// One broken invariant as the explore summaries write it.
inline nlohmann::ordered_json break_json(const explore::invariant_break& b) {
  nlohmann::ordered_json j;
  j["invariant"] = b.name;
  j["at_ns"] = b.at_ns;
  j["detail"] = b.detail;
  return j;
}

}  // namespace admit::cli
