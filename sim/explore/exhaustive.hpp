// exhaustive: every order of same-instant events of one run, within a bound.
//
// Model. A run of a scenario is deterministic except where several events are
// due at one instant: there the scheduler's default is insertion order, and a
// sim::tie_chooser may pick any of them instead (sim/kernel/scheduler.hpp).
// One run is one sequence of choices. The search walks those sequences by
// re-execution, as stateless systematic concurrency testers do: a run fixes
// a prefix of choices and takes the default (choice 0) after it, recording
// how many candidates each choice point had. Its children are the prefixes
// that keep its choices up to some point j at or after the end of its own
// prefix and take another candidate c >= 1 at j. Every sequence has exactly
// one parent (zero its last non-default choice), so every order runs once;
// and the first point where two sequences differ runs a different event, so
// the runs are distinct orders (the scheduler's fingerprints confirm it).
//
// Bound and order. Choosing candidate i at a point delays the i entries the
// default order would have run first: a run's delays are the sum of its
// choices, and only runs with at most `max_delays` are explored (delay-bounded
// search: most races need one or two delays). The search runs level by level
// in the number of delays, fewest first, each level's prefixes sorted, so
// that `max_orders` (the runs per variant) cuts off the orders with the most
// delays, and a level's runs are independent: `jobs` threads run them, and
// the results are taken in the sorted order, so nothing depends on `jobs`.
// `complete` says whether every order within the delay bound ran.
//
// An order is written as the choice points where it leaves the default,
// "POINT:CHOICE,...", counting points from 0 in the run (see format_order);
// `admitsim explore FILE --order ORDER --variant V` replays one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/check/trace_sink.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/run_record.hpp"

namespace admit::explore {

struct order_step {
  std::uint64_t point = 0;   // the choice point, counted from 0 in the run
  std::uint64_t choice = 0;  // the candidate run there (0: the default)
  friend bool operator==(const order_step&, const order_step&) = default;
};
using order = std::vector<order_step>;  // the non-default choices, by point

// "3:1,17:2"; "" for the default order.
std::string format_order(const order& o);
// Parses format_order's text; nullopt with `error` set when it is not one
// (points strictly increasing, choices at least 1).
std::optional<order> parse_order(const std::string& text, std::string& error);

struct exhaustive_limits {
  std::uint64_t max_delays = 2;
  std::uint64_t max_orders = 100'000;  // per variant
  std::size_t findings_kept = 20;      // per variant: the first violating orders, in search order
  unsigned jobs = 1;                   // threads running one level's orders
};

struct order_finding {
  order path;
  std::uint64_t delays = 0;
  run_outcome outcome;
};

struct variant_orders {
  std::string variant;                     // "" for FIFO
  std::uint64_t orders = 0;                // runs, one order each
  std::uint64_t distinct_fingerprints = 0;  // equals `orders` (a check of the search)
  std::uint64_t choice_points_default = 0;  // in the default order's run
  std::uint64_t choice_points_max = 0;      // in any run
  bool complete = false;                    // every order within max_delays ran
  std::uint64_t violating_orders = 0;
  std::uint64_t counterexample_orders = 0;
  run_outcome default_outcome;           // the default order's run
  std::vector<order_finding> findings;   // the first findings_kept violating orders
};

struct exhaustive_summary {
  std::uint64_t seed = 0;  // the scenario's own seed: every order is of that run
  exhaustive_limits limits;
  std::vector<variant_orders> variants;  // in the scenario's variant order
};

// Enumerates the orders of the scenario's own run (its seed; faults.rates
// drawn with it), one lease variant at a time.
exhaustive_summary enumerate_orders(const scenario::scenario& base, const exhaustive_limits& limits);

// One order of one variant ("" for FIFO), every trace entry of it also to
// `trace_to`. Throws std::invalid_argument when the order names a choice
// point the run does not reach or a candidate the point does not have, or the
// variant is not the scenario's.
run_outcome run_in_order(const scenario::scenario& base, const std::string& variant, const order& path,
                         check::trace_sink* trace_to = nullptr);


}  // namespace admit::explore
