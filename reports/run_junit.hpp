// run_junit: the JUnit XML of `admitsim run --junit` and `admitsim explore
// --junit` (the writer is junit.hpp; docs/ci.md shows how CI reads them).
//
// run: one <testsuite> per scenario file, one <testcase> per run (a FIFO
// scenario's one run, a lease scenario's run of each variant or protocol).
// A case passes exactly when its run is as its scenario expects (the exit
// status `run` gives); otherwise it is an <error> when the run could not
// finish and judged no violation (inconclusive), else a <failure>.
//
// explore: one <testsuite> for the explored scenario, one <testcase> per
// variant (the scenario's name for a FIFO one). A case is not a pass exactly
// when it holds one of the reasons for which explore exits 1:
//   <failure>  a seed broke an invariant the variant's expectation does not
//              allow (a counterexample), or no seed showed the violation the
//              variant is expected to show;
//   <error>    the search could not conclude: interrupted, no seed ran, a seed
//              ended in an internal error (every variant: the seed's run is
//              not known variant by variant), a run of the variant could not
//              finish (inconclusive), or a shrunk finding did not reproduce.
// A counterexample wins over an error (it is a finding whatever else
// happened); the other reasons are listed in the element's text. An expected
// violation is a pass, with the seed that showed it in <system-out>.
//
// A failure's text names the first violation (invariant, time, detail), its
// cause when the world named one, and the command that replays it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/evidence.hpp"
#include "reports/junit.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/run_record.hpp"

namespace admit::reports {

// The suite of one scenario file of `run`: `replay` is the report's replay command.
junit_suite run_junit_suite(const scenario::scenario& sc, const std::vector<world::run_record>& runs,
                            const std::string& replay);

// The document of `run`, one suite per scenario file in command-line order.
std::string render_run_junit(const std::vector<junit_suite>& suites);

// One broken invariant a search saw, with the seed and how to replay it.
struct explore_junit_break {
  std::uint64_t seed = 0;
  std::string invariant;
  std::int64_t at_ns = 0;
  std::string detail;
  std::optional<std::string> cause;  // "kind: example", the first cause the world named
  std::string replay;                // the summary's replay command of the seed
  std::optional<std::string> explored_scenario;  // the seed's scenario file, when a shrink wrote one
  std::optional<std::string> minimal_scenario;   // its minimal scenario, when the shrink made one
  // With --confirm: "broke X (confirmed on redis-server 7.0.15): FILE, time scale 0.1: why".
  std::optional<std::string> confirmation;
};

// What a search found for one variant ("" for a FIFO scenario).
struct explore_junit_variant {
  std::string variant;
  std::string expected;  // "pass", or "violation" with the invariants it names: "violation of a, b"
  bool expects_violation = false;
  std::optional<explore_junit_break> counterexample;  // the first seed with one
  std::uint64_t counterexample_seeds = 0;
  std::optional<explore_junit_break> expected_shown;  // the first seed that showed the expected violation
  std::uint64_t inconclusive_seeds = 0;               // runs of the variant cut short and not expected to be
  std::optional<std::string> first_inconclusive;      // "seed N: reason (replay: ...)"
  std::vector<std::string> shrink_failures;           // one line per shrink that did not reproduce
  std::optional<evidence> ev;                         // what the variant's runs rest on, when any ran
};

struct explore_junit_input {
  std::string name;  // the scenario's
  std::string file;  // as given
  std::uint64_t seeds_ran = 0;
  std::string seeds;  // "0..99" or "none", for system-out
  // Reasons the whole search could not conclude (interrupted, no seed ran, internal errors): every case is an error.
  std::vector<std::string> search_errors;
  std::vector<explore_junit_variant> variants;  // in the scenario's run order
};

std::string render_explore_junit(const explore_junit_input& in);

}  // namespace admit::reports
