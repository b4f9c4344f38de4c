// verb: one verb of the admitsim command (run, replay, check, list, explore, invariants, sweep).
//
// A verb is a class in its own file: its constructor adds its subcommand and
// options to the app (its --help), and run() does its job once the command
// line named it. Every verb is made by make_verbs (verbs.cpp), the one list
// main reads; main parses the command line and prints every error line
// (errors.hpp). Adding a verb: its file, its line in verbs.cpp, its source in
// sim/cli/CMakeLists.txt (docs/architecture.md, "How to add ...").
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <vector>

namespace admit::cli {

class verb {
 public:
  verb(const verb&) = delete;
  verb& operator=(const verb&) = delete;
  virtual ~verb() = default;

  bool parsed() const { return sub_->parsed(); }
  // Its job; returns the exit code (errors.hpp). Throws input_error for bad
  // input (exit 2) and run_error for a run that failed inside (exit 1).
  virtual int run() const = 0;

 protected:
  explicit verb(CLI::App* sub) : sub_(sub) {}
  CLI::App* sub_;
};

// Every verb, registered on `app` in the order --help lists them.
std::vector<std::unique_ptr<verb>> make_verbs(CLI::App& app);

}  // namespace admit::cli
