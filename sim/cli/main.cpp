// admitsim: the command-line face of the simulator.
//
//   admitsim run FILE... [--seed N] [--out PATH|-] [--out-dir DIR] [--html PATH] [--quiet]
//   admitsim replay REPORT.json
//   admitsim check FILE...
//   admitsim list [--dir DIR]
//   admitsim invariants [--world fifo|lease]
//   admitsim explore FILE [--seeds N | --time 60s] [--jobs N] [--shard I/N] [--out DIR]  (explore.hpp)
//
// Exit codes: 0 every run came out as its scenario expects; 1 at least one
// did not (or a replay differed); 2 bad input or usage. Every error is one
// line "admitsim: SUBJECT: MESSAGE" (errors.hpp), for bad input in a file
// "admitsim: FILE: /json/path: what was expected, got what", and no report
// is written for it. Every input is read by read_file.hpp (regular files or
// "-", up to a limit) and every scenario validated before any runs; every
// output path is checked before a run and written by write_file.hpp (a
// temporary file renamed over a regular file, devices and FIFOs written in
// place), so a report file on disk is always complete.
//
// Each verb is a class in its own file (verb.hpp; the list is verbs.cpp);
// this file parses the command line, runs the verb it names and prints the
// line of any error.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cli/errors.hpp"
#include "sim/cli/verb.hpp"
#include "sim/scenario/memory_reserve.hpp"

#ifndef ADMITSIM_VERSION
#define ADMITSIM_VERSION "0.0.0"
#endif

using namespace admit;

namespace {

using cli::exit_bad_input;

// The subject of an error line that names no file or option: the verb on the command line, or
// no_verb before one is known.
constexpr std::string_view no_verb = "usage";
std::string_view verb_of(const CLI::App& app) {
  const auto& verbs = app.get_subcommands();
  return verbs.empty() ? no_verb : std::string_view(verbs.front()->get_name());
}

}  // namespace

int main(int argc, char** argv) {
  admit::scenario::install_memory_reserve();  // room to tear down after a bad_alloc (memory_reserve.hpp)
  CLI::App app{"admitsim: deterministic simulation and test harness for admission-control gates"};
  app.set_version_flag("--version", std::string("admitsim ") + ADMITSIM_VERSION);
  app.require_subcommand(1);
  app.footer("Inputs are regular files or '-' (standard input) of at most 256 MiB; output paths are checked before "
             "a run and a device or FIFO is written in place. Every limit and refusal: docs/limits.md.");

  const std::vector<std::unique_ptr<cli::verb>> verbs = cli::make_verbs(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as every other refusal: CLI11's words about the verb's command line, then where its usage is.
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    const std::string_view verb = verb_of(app);
    const std::string command = verb == no_verb ? "admitsim" : "admitsim " + std::string(verb);
    cli::print_error(verb, what + " (" + command + " --help shows the usage)");
    return exit_bad_input;
  }

  const std::string_view verb = verb_of(app);  // found before a bad_alloc may need it
  try {
    for (const auto& v : verbs)
      if (v->parsed()) return v->run();
  } catch (...) {
    return cli::report_current_exception(verb);
  }
  return exit_bad_input;
}
