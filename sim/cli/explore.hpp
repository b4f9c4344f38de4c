// explore: the `admitsim explore` verb (docs/explore.md).
//
//   admitsim explore FILE [--seeds N | --time 60s] [--first-seed S] [--jobs N]
//                         [--shard I/N] [--out DIR] [--quiet] [--no-shrink]
//                         [--shrink-max K] [--shrink-runs R] [--perturb-ties | --ties-only]
//                         [--junit PATH|-] [--confirm [--confirm-runs N] [--time-scale X]
//                         [--redis-server PATH] [--confirm-wall-limit S]]
//   admitsim explore FILE --exhaustive [--max-delays K] [--max-orders N] [--out DIR]
//   admitsim explore FILE --order ORDER [--variant V] [--trace PATH|-]
//
// Runs the scenario under many seeds (each seed drawing its own fault rates
// inside the scenario's `faults.rates` bounds and its own schedule from
// them), on `--jobs` threads (at most jobs_max), one run per thread; shrinks the first finding
// of each kind to a minimal scenario file; writes DIR/<name>-explore.json.
// Exit codes: 0 nothing contradicts the scenario's expectation; 1 a
// counterexample, an internal error, an expected violation that no seed
// showed, a shrunk file that did not reproduce, no seed ran, or SIGINT
// stopped the search (its summary then says "complete": false); 2 bad input
// or usage, checked before anything runs (docs/limits.md).
// --exhaustive and --order enumerate or replay same-instant orders instead
// (explore_orders.hpp). --confirm runs each shrunk counterexample on a real
// redis-server once the shrinks are done (confirm_options.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "sim/cli/confirm_options.hpp"
#include "sim/cli/verb.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::cli {

// The most threads --jobs may ask for: a 2-core machine gains nothing past a
// few, each thread reserves a stack of 8 MiB, and 256 covers the largest
// machines the search is meant for (docs/limits.md).
inline constexpr unsigned jobs_max = 256;

struct seed_search;  // the options of a seed search, read and checked (explore.cpp)

class explore_verb final : public verb {
 public:
  // Registers the subcommand on `app`.
  explicit explore_verb(CLI::App& app);
  // Runs it; returns the exit code. Throws input_error (errors.hpp) for bad input, which main reports (exit 2).
  int run() const override;

 private:
  // --jobs, or the machine's hardware threads (at most jobs_max).
  unsigned read_jobs() const;
  // --exhaustive or --order (explore_orders.hpp).
  int run_order_modes(const std::string& bytes, const scenario::scenario& base, unsigned jobs) const;
  // The seed search's options, every one checked before anything runs.
  seed_search read_seed_options(const scenario::scenario& base, unsigned jobs) const;
  // The seed search, job by job: its options, its folder, the seeds, the shrinks, the verdict, the
  // summary file and stderr.
  int run_seeds(const std::string& bytes, const scenario::scenario& base, unsigned jobs) const;

  std::string file_;
  // Numeric options are read as text and parsed strictly (numbers.hpp); *_given_ say whether they were.
  std::string seeds_;
  CLI::Option* seeds_given_ = nullptr;
  std::string time_;
  std::optional<std::string> until_bound_;  // --until-bound P
  std::string first_seed_ = "0";
  std::string jobs_;
  CLI::Option* jobs_given_ = nullptr;
  std::string shard_ = "0/1";
  std::string out_dir_ = "out/explore";
  bool quiet_ = false;
  bool coverage_ = false;  // --coverage
  bool no_shrink_ = false;
  bool perturb_ties_ = false;
  std::string search_ = "swarm";
  bool ties_only_ = false;
  std::string shrink_max_ = "4";
  std::string shrink_runs_ = "5000";
  bool exhaustive_ = false;
  std::string max_delays_ = "2";
  std::string max_orders_ = "100000";
  bool placements_ = false;
  std::string max_placements_ = "100000";
  std::optional<std::string> order_;
  std::string variant_;
  std::optional<std::string> trace_;
  std::optional<std::string> junit_;
  confirm_options confirm_;  // --confirm and its options
};

}  // namespace admit::cli
