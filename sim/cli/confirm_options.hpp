// confirm_options: `--confirm` and the options that go with it, for `explore`, `merge` and `matrix`
// (docs/confirm.md, "explore --confirm, merge --confirm and matrix --confirm").
//
// With --confirm, once the simulated work is done (the seeds, the shrinks), each counterexample the
// verb wrote is run on a real redis-server by sim/confirm, one at a time (a real run must not share
// the CPUs with simulation jobs), and its confirmation is written beside it. A confirmation is a
// measurement, not a function of the seed: it appears only with --confirm, and without it every
// output keeps its bytes.
//
//   --confirm                 confirm each counterexample
//   --confirm-runs N          real runs at most a counterexample, 1 to 1000 (default 1; a confirmed break stops them)
//   --time-scale X            real time = scenario time * X, 0.01 to 100 (default 1)
//   --redis-server PATH       the redis-server program (default: redis-server on PATH)
//   --confirm-wall-limit S    seconds a real run may take, 1 to 86400 (default 600)
//
// Every value is read and checked before anything runs (exit 2 naming the option); an option of
// --confirm without it is refused the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "reports/confirmation_record.hpp"
#include "sim/confirm/real_run.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::cli {

// --confirm's options, read and checked.
struct confirm_settings {
  int runs = 1;
  confirm::run_options opts;  // its seed is each counterexample's own; interrupted is set by start()

  // Before the first confirmation: SIGINT (already caught by the verb) and SIGTERM stop the real run
  // under way, whose server is stopped and whose folder is removed.
  void start();
};

class confirm_options {
 public:
  // Registers the options on `sub` (the verb's subcommand). `what` says what is confirmed, for --help.
  void add_to(CLI::App* sub, const std::string& what);
  // The --confirm flag itself, for a verb's `excludes`.
  CLI::Option* flag() const { return confirm_; }
  // The settings with --confirm, nullopt without it; throws input_error (exit 2) naming the option
  // for a bad value, or for an option of --confirm given without it.
  std::optional<confirm_settings> read() const;

 private:
  bool on_ = false;
  std::string runs_ = "1", scale_ = "1", program_ = "redis-server", wall_ = "600";
  CLI::Option* confirm_ = nullptr;
  CLI::Option* runs_given_ = nullptr;
  CLI::Option* scale_given_ = nullptr;
  CLI::Option* program_given_ = nullptr;
  CLI::Option* wall_given_ = nullptr;
};

// The counterexample `sc` (a scenario file's, run with its own seed) whose run `name` ("" for a FIFO
// scenario) broke `broken` in the simulator, confirmed on a real redis-server as `s` says. Never
// throws for the scenario's sake: what a real run cannot make is an inconclusive confirmation. One
// that SIGINT or SIGTERM cut before it could confirm the break is marked interrupted.
reports::confirmation_record confirm_on_redis(const scenario::scenario& sc, const std::string& name,
                                             const std::string& broken, const confirm_settings& s);

}  // namespace admit::cli
