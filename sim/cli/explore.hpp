// explore: the `admitsim explore` verb (docs/explore.md).
//
//   admitsim explore FILE [--seeds N | --time 60s] [--first-seed S] [--jobs N]
//                         [--shard I/N] [--out DIR] [--quiet] [--no-shrink]
//                         [--shrink-max K] [--shrink-runs R] [--perturb-ties | --ties-only]
//   admitsim explore FILE --exhaustive [--max-delays K] [--max-orders N] [--out DIR]
//   admitsim explore FILE --order ORDER [--variant V]
//
// Runs the scenario under many seeds (each seed drawing its own fault rates
// inside the scenario's `faults.rates` bounds and its own schedule from
// them), on `--jobs` threads, one run per thread; shrinks the first finding
// of each kind to a minimal scenario file; writes DIR/<name>-explore.json.
// Exit codes: 0 nothing contradicts the scenario's expectation; 1 a
// counterexample, an internal error, an expected violation that no seed
// showed, or a shrunk file that did not reproduce; 2 bad input or usage.
// --exhaustive and --order enumerate or replay same-instant orders instead
// (explore_orders.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace admit::cli {

class explore_verb {
 public:
  // Registers the subcommand on `app`.
  explicit explore_verb(CLI::App& app);
  bool parsed() const { return sub_->parsed(); }
  // Runs it; returns the exit code. Reports bad input itself (exit 2).
  int run() const;

 private:
  CLI::App* sub_ = nullptr;
  std::string file_;
  std::optional<std::uint64_t> seeds_;
  std::string time_;
  std::uint64_t first_seed_ = 0;
  unsigned jobs_ = 0;
  std::string shard_ = "0/1";
  std::string out_dir_ = "out/explore";
  bool quiet_ = false;
  bool no_shrink_ = false;
  bool perturb_ties_ = false;
  bool ties_only_ = false;
  std::size_t shrink_max_ = 4;
  std::size_t shrink_runs_ = 5'000;
  bool exhaustive_ = false;
  std::uint64_t max_delays_ = 2;
  std::uint64_t max_orders_ = 100'000;
  std::optional<std::string> order_;
  std::string variant_;
};

}  // namespace admit::cli
