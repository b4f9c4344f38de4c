// explore_orders: the same-instant order modes of `admitsim explore`
// (docs/explore.md, "Same-instant orders").
//
//   admitsim explore FILE --exhaustive [--max-delays K] [--max-orders N] [--jobs N] [--out DIR]
//   admitsim explore FILE --order ORDER [--variant V] [--trace PATH|-]
//   admitsim explore FILE --placements [--max-placements N] [--jobs N] [--out DIR]
//
// --exhaustive enumerates the orders of the scenario's own run (its seed, its
// rates drawn with it), per lease variant, within the delay bound
// (sim/explore/exhaustive.hpp) and writes DIR/<name>-orders.json; --order
// replays one order it reported, and with --trace writes every trace entry
// of that run as JSON lines (trace_file.hpp). Exit codes: 0 nothing contradicts the
// scenario's expectation (for --order: the run came out as expected); 1 an
// order broke an invariant the expectation does not allow, or --max-orders
// cut the enumeration (inconclusive) (for --order: the run did not come out
// as expected); 2 bad input.
//
// --placements runs every placement of the scenario's scheduled faults at the
// instants its run acts (sim/explore/placement.hpp) and writes
// DIR/<name>-placements.json, and a scenario file of each variant's first
// violating placement. Exit 0: every placement ran and came out as expected;
// 1: a placement broke an invariant the expectation does not allow, or the
// bound cut the search (no statement about every placement), or a placement
// could not finish; 2: bad input (rates, or no faults or too many to place).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/scenario/scenario.hpp"

namespace admit::cli {

struct orders_request {
  std::string file;   // as given on the command line
  std::string bytes;  // its contents
  const scenario::scenario* base = nullptr;
  std::uint64_t max_delays = 2;
  std::uint64_t max_orders = 100'000;
  std::optional<std::string> order;  // set: replay this order instead of enumerating
  std::string variant;
  std::optional<std::string> trace;  // --order: the trace file
  std::string out_dir;
  unsigned jobs = 1;  // threads for --exhaustive and --placements
  bool placements = false;
  std::uint64_t max_placements = 100'000;  // runs per variant
  bool quiet = false;
};

// Where --exhaustive writes its summary: OUT_DIR/<name>-orders.json; --placements: OUT_DIR/<name>-placements.json.
std::string orders_summary_path(const orders_request& req);

// Runs the request; prints what it found on stderr; returns the exit code.
// Throws input_error (errors.hpp) for a bad --order or --variant and a summary
// that cannot be written, std::system_error when a thread cannot be started.
int run_orders(const orders_request& req);

}  // namespace admit::cli
