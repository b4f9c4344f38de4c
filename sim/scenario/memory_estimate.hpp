// memory_estimate: a scenario's worst-case memory, judged at load.
//
// Why: a scenario can ask for more memory than any machine has (a gate with
// 10,000,000 waiting places and as many requests, a million-entry event log
// per gate, 100,000,000 generated items into a lease fleet that cannot keep
// up), and finding out by running it ends in std::bad_alloc after minutes.
// The loader adds up what the bounds let the worlds keep at once and refuses
// a scenario whose worst case exceeds memory_limit_bytes, naming the biggest
// contributor:
//   /: expected a scenario whose worst case fits in 4 GiB, got about 12.3 GiB, mostly /gates/0/max_waiting
//
// The figures per unit are measured (docs/scenarios.md, "Limits"), rounded up:
// an estimate, not a bound on every allocation.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario.hpp"

namespace admit::scenario {

// 4 GiB: half of an ordinary 8 GiB machine or CI runner, and 600 times what
// the largest catalogue run needs (bench_fifo, 6 MiB); `admitsim replay` holds
// a report and its re-run besides, so a worst case near the limit still fits.
inline constexpr std::uint64_t memory_limit_bytes = std::uint64_t{4} << 30;

struct memory_estimate {
  std::uint64_t bytes = 0;          // the worst case, all contributions summed
  std::uint64_t biggest_bytes = 0;  // the largest single contribution
  std::string biggest_path;         // its JSON Pointer, e.g. "/gates/0/max_waiting"
};

// `doc` is the document `sc` was loaded from (only to spell paths as the file
// does: "/gate/..." or "/gates/N/...").
memory_estimate estimate_memory(const scenario& sc, const nlohmann::ordered_json& doc);

// Throws scenario_error when estimate_memory(sc, doc).bytes > memory_limit_bytes.
void check_memory_estimate(const scenario& sc, const nlohmann::ordered_json& doc);

}  // namespace admit::scenario
