// results: what the monitors of one run found, as plain data.
//
// A run's record (sim/world/run_record.hpp) holds these; the verdict logic
// (verdict.hpp) and the reports read them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/kernel/vtime.hpp"

namespace admit::check {

struct violation {
  sim::vtime_ns at_ns = 0;
  std::string detail;
  std::uint64_t trace_index = 0;  // how many trace entries preceded it in the run
};

struct invariant_result {
  std::string name;
  bool enabled = true;
  bool holds = true;
  std::uint64_t checked = 0;
  std::optional<violation> first;
};

// Coverage probes: rare paths and how often the run took them, in a fixed
// order per world; a probe at 0 is a path the scenario never exercised.
using probe_counts = std::vector<std::pair<std::string, std::uint64_t>>;

}  // namespace admit::check
