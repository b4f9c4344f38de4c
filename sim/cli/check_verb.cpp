// admitsim check FILE... [--quiet]: validates scenario files without running them.
#include <cstdio>
#include <string>
#include <vector>

#include "sim/cli/errors.hpp"
#include "sim/cli/scenario_run.hpp"
#include "sim/cli/verb.hpp"

namespace admit::cli {

namespace {

int cmd_check(const std::vector<std::string>& files, bool quiet) {
  for (const auto& f : files) {
    loaded l = load_file(f);
    if (!quiet) std::fprintf(stderr, "%s: ok (%s)\n", f.c_str(), l.sc.name.c_str());
  }
  return exit_as_expected;
}

class check_verb final : public verb {
 public:
  explicit check_verb(CLI::App& app) : verb(app.add_subcommand("check", "Validate scenario files without running them")) {
    sub_->add_option("FILE", files_, "Scenario files ('-' for standard input)")->required();
    sub_->add_flag("--quiet,-q", quiet_, "No output for valid files");
  }
  int run() const override { return cmd_check(files_, quiet_); }

 private:
  std::vector<std::string> files_;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<verb> make_check_verb(CLI::App& app) { return std::make_unique<check_verb>(app); }

}  // namespace admit::cli
