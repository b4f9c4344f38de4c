// confirm: a simulated result checked on a real redis-server (docs/confirm.md).
//
// For one run of a lease scenario (a variant or a protocol, with its seed's
// faults), given what the simulator found, up to `runs` real runs
// (real_run.hpp) are made, and the result is
//   confirmed      a real run broke an invariant the simulated run broke
//                  (stops at the first), or, where the simulation held, any
//                  watched invariant (then not as expected: the model missed it);
//   not_confirmed  every real run ended without breaking a watched invariant;
//   inconclusive   no real run could be judged (a server would not start, a run
//                  passed its wall limit, SIGINT), or the simulated break is of
//                  an invariant a real run does not watch.
// As expected: confirmed where the simulation broke, not_confirmed where it held.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/confirm/real_run.hpp"

namespace admit::confirm {

inline constexpr int runs_max = 1000;

struct simulated {
  std::string verdict;              // pass, violation, inconclusive
  std::vector<std::string> broken;  // the invariants it broke
};

struct confirmation {
  std::string run;  // the variant's or protocol's name
  simulated sim;
  std::string verdict;  // confirmed, not_confirmed, inconclusive
  std::string why;      // one sentence
  bool as_expected = false;
  std::vector<run_result> real;
};

// `cfg` with every duration multiplied by `scale` (at least 1 ms or 1 ns where it was positive), its
// protocol's WAIT timeout (client.acknowledge) too.
gate::lease_client_config scaled(const gate::lease_client_config& cfg, double scale);

// Confirms the run `name` of `sc` (its faults drawn for opts.seed) whose every worker is configured by
// `cfg` (unscaled), the simulator having found `sim`; at most `runs` real runs (1 .. runs_max).
confirmation confirm_run(const scenario::scenario& sc, const std::string& name, const simulated& sim,
                         const gate::lease_client_config& cfg, const run_options& opts, int runs);

// A shrunk counterexample of explore or matrix confirmed: the run `name` of `sc` whose simulated run with
// `opts.seed` broke `broken` (its faults are drawn here for that seed). What a real run cannot make, or a run
// the gate does not have, is an inconclusive confirmation naming why; it never throws for the scenario's sake.
confirmation confirm_counterexample(const scenario::scenario& sc, const std::string& name, const std::string& broken,
                                    const run_options& opts, int runs);

// The words a matrix cell or a finding line carries: "confirmed on redis-server 7.0.15", "not confirmed in 3
// real runs", "confirmation inconclusive".
std::string label(const confirmation& c);

nlohmann::ordered_json to_json(const run_result& r);
nlohmann::ordered_json to_json(const confirmation& c);

}  // namespace admit::confirm
