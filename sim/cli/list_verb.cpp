// admitsim list [--dir DIR]: the scenario catalogue, one line each (INVALID
// with its error for a file that does not load).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "sim/cli/errors.hpp"
#include "sim/cli/scenario_run.hpp"
#include "sim/cli/verb.hpp"
#include "sim/scenario/loader.hpp"

namespace admit::cli {

namespace {

namespace fs = std::filesystem;

int cmd_list(const std::string& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json" && e.path().filename() != "schema.json") files.push_back(e.path());
  if (ec) throw input_error{dir, "cannot list the directory (" + ec.message() + ")"};
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      loaded l = load_file(f.string());
      // Control characters of a description would reach the terminal: escaped as the loader's messages are.
      std::string desc = scenario::printable(l.sc.description);
      if (desc.size() > 90) desc = desc.substr(0, 87) + "...";
      std::printf("%-28s %-9s %s\n", scenario::printable(l.sc.name).c_str(), l.sc.expect.verdict.c_str(), desc.c_str());
    } catch (const input_error& e) {
      std::printf("%-28s %-9s %s\n", scenario::printable(f.filename().string()).c_str(), "INVALID",
                  scenario::printable(e.text()).c_str());
    }
  }
  return exit_as_expected;
}

class list_verb final : public verb {
 public:
  explicit list_verb(CLI::App& app) : verb(app.add_subcommand("list", "List the scenario catalogue, one line each")) {
    sub_->add_option("--dir", dir_, "Catalogue directory (default: scenarios)");
  }
  int run() const override { return cmd_list(dir_); }

 private:
  std::string dir_ = "scenarios";
};

}  // namespace

std::unique_ptr<verb> make_list_verb(CLI::App& app) { return std::make_unique<list_verb>(app); }

}  // namespace admit::cli
