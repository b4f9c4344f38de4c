// placement: every placement of a small scenario's faults at the instants
// where the protocol acts, within a bound (`admitsim explore --placements`).
//
// Model. The scenario's explicit schedule names the faults (one to
// placement_faults_max of them, each with its kind, target and length; its
// `at` is what the search chooses) and no rates. A run is deterministic given
// the fault times, so the search re-executes: a run with the first j faults
// placed, traced, gives the *instants* of that run (every trace entry's time:
// each call sent, reply, grant, renewal, release, portal open and close, gate
// event and answer; in a lease world also each Redis reply plus one lease,
// when a permit it granted or renewed runs out), and fault j + 1 is placed at
// each instant's neighbours, 1ns before and 1ns after (before: it strikes
// before the event; after: the event has happened), not before fault j's own
// time. The runs with every fault placed are judged against the scenario's
// expectation (its variant's entry), as explore judges a seed. A placement
// whose fault would outlast checks.liveness_horizon is skipped (the loader
// would refuse it), and counted.
//
// Bound and order. The search runs level by level (faults placed), each
// level's placements sorted by their times and run on `jobs` threads with
// the results taken in that order, so nothing depends on `jobs`. At most
// `max_runs` runs per variant, every level counted; a level that would pass
// it is cut and the variant is not `complete`: its result is no statement
// about every placement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/explore/explorer.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::explore {

inline constexpr std::size_t placement_faults_max = 3;

struct placement_limits {
  std::uint64_t max_runs = 100'000;  // per variant, every run of the search
  std::size_t findings_kept = 20;    // per variant: the first violating placements, in search order
  unsigned jobs = 1;
};

struct placement_finding {
  std::vector<vtime_ns> at_ns;  // each fault's time, in the schedule's order
  run_outcome outcome;
};

struct variant_placements {
  std::string variant;  // "" for FIFO
  std::uint64_t runs = 0;                 // every run, those that found instants included
  std::uint64_t placements = 0;           // judged: every fault placed
  std::uint64_t instants_fault_free = 0;  // the instants of the run without the faults
  std::uint64_t skipped_past_horizon = 0;  // placements whose fault would outlast the liveness horizon
  bool complete = false;                  // every placement within the bound ran
  std::uint64_t violating = 0;
  std::uint64_t counterexamples = 0;
  std::uint64_t inconclusive = 0;  // a limit cut the run and its scenario does not expect that
  std::vector<placement_finding> findings;
};

struct placement_summary {
  std::uint64_t seed = 0;  // the scenario's own seed: every placement is of that run
  placement_limits limits;
  std::vector<scenario::fault_spec> faults;  // the faults placed, as the file gives them
  std::vector<variant_placements> variants;  // in the scenario's run order
};

// What the search needs of the scenario, or "" when it has it: 1 to placement_faults_max
// scheduled faults and no rates. Says what the file should change (for the CLI's exit 2).
std::string placement_refusal(const scenario::scenario& base);

// Every placement, per lease variant. Precondition: placement_refusal(base) is "".
placement_summary enumerate_placements(const scenario::scenario& base, const placement_limits& limits);

// The scenario of one placement of one variant ("" for FIFO): the faults at those times, the
// variant's expectation as the file's, nothing else changed. Throws std::invalid_argument for a variant the scenario does not have.
scenario::scenario placed(const scenario::scenario& base, const std::string& variant, const std::vector<vtime_ns>& at_ns);

}  // namespace admit::explore
