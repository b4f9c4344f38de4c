// Tests of bad input: the malformed-input table (tests/scenario/malformed/,
// with each file's exact message and JSON path in expected.json) through the
// loader, and a few of them through the admitsim binary, which must exit 2,
// print one line "FILE: /path: expected ...", and write no report.
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "sim/scenario/loader.hpp"
#include "tests/scenario/scenario_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using admit::test::read_bytes;
using admit::test::read_json;
using admit::test::source_path;

const std::string malformed_dir = source_path("tests/scenario/malformed");

const json& expected() {
  static const json e = read_json(malformed_dir + "/expected.json");
  return e;
}

// A message of the table, with "{fifo_invariants}" and "{lease_invariants}"
// standing for the invariant names of that world as the loader lists them
// (sim/check/invariants.hpp), so that a new monitor does not rewrite the table.
std::string expected_message(const std::string& file) {
  std::string m = expected().at(file).at("message").get<std::string>();
  for (const auto& [key, world] : {std::pair<std::string, unsigned>{"{fifo_invariants}", admit::check::world_fifo},
                                   std::pair<std::string, unsigned>{"{lease_invariants}", admit::check::world_lease}}) {
    std::string names;
    for (const auto& row : admit::check::invariant_table)
      if (row.worlds & world) names += std::string(names.empty() ? "" : ", ") + "\"" + row.name + "\"";
    const auto at = m.find(key);
    if (at != std::string::npos) m.replace(at, key.size(), names);
  }
  return m;
}

}  // namespace

TEST_CASE("the malformed table covers every file, and enough of them") {
  // Goal: no file in the folder goes untested and no entry is stale. Method: compare the folder with expected.json.
  std::set<std::string> on_disk, listed;
  for (const auto& e : fs::directory_iterator(malformed_dir))
    if (e.path().filename() != "expected.json") on_disk.insert(e.path().filename().string());
  for (auto it = expected().begin(); it != expected().end(); ++it) listed.insert(it.key());
  CHECK(on_disk == listed);
  CHECK(listed.size() >= 30);
}

TEST_CASE("each malformed file is rejected with its exact message and path") {
  // Goal: the messages are part of the interface. Method: load every file of the table; compare what() and path.
  for (auto it = expected().begin(); it != expected().end(); ++it) {
    CAPTURE(it.key());
    const std::string bytes = read_bytes(malformed_dir + "/" + it.key());
    bool rejected = false;
    try {
      (void)admit::scenario::load_scenario_text(bytes);
    } catch (const admit::scenario::scenario_error& e) {
      rejected = true;
      CHECK(std::string(e.what()) == expected_message(it.key()));
      CHECK(e.path == it.value().at("path").get<std::string>());
      // One printable line.
      const std::string w = e.what();
      CHECK(std::all_of(w.begin(), w.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
    }
    CHECK(rejected);
  }
}

#ifdef ADMITSIM_CLI
namespace {

struct cli_result {
  int exit_code = -1;
  std::vector<std::string> stderr_lines;
};

// Runs the admitsim binary with `args` (already shell-quoted) from the
// malformed folder, capturing stderr into a file.
cli_result run_cli(const std::string& args) {
  const fs::path tmp = ADMITSIM_TEST_TMP;
  fs::create_directories(tmp);
  const fs::path err = tmp / "stderr.txt";
  const std::string cmd = "cd '" + malformed_dir + "' && '" + std::string(ADMITSIM_CLI) + "' " + args + " >/dev/null 2>'" +
                          err.string() + "'";
  const int status = std::system(cmd.c_str());
  cli_result r;
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  const std::string text = read_bytes(err.string());
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    r.stderr_lines.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return r;
}

}  // namespace

TEST_CASE("the CLI rejects malformed files with exit 2, one line, and no report") {
  // Goal: bad input never looks like a result. Method: `check` and `run --out-dir` on files of the table; compare
  // the exit code and the single stderr line with the table, and look for any file in the output folder.
  const fs::path out_dir = fs::path(ADMITSIM_TEST_TMP) / "reports";
  fs::remove_all(out_dir);
  const std::vector<std::string> files = {"empty.json",          "binary_garbage.json",      "truncated.json",
                                          "huge_exponent.json",  "zero_cap.json",            "unknown_gate_key.json",
                                          "fault_negative_at.json", "dangling_case_request.json"};
  for (const auto& f : files) {
    CAPTURE(f);
    const std::string line_end = f + ": " + expected_message(f);
    for (const std::string& verb : {std::string("check"), "run --out-dir '" + out_dir.string() + "'"}) {
      CAPTURE(verb);
      const cli_result r = run_cli(verb + " " + f);
      CHECK(r.exit_code == 2);
      REQUIRE(r.stderr_lines.size() == 1);
      const std::string& line = r.stderr_lines[0];
      // The line ends with "FILE: /path: expected ..."; the CLI may put its own name first.
      CHECK(line.size() >= line_end.size());
      CHECK(line.compare(line.size() - std::min(line.size(), line_end.size()), std::string::npos, line_end) == 0);
    }
  }
  // A valid file listed after a bad one is not run either: every file is checked before any runs.
  const cli_result mixed = run_cli("run --out-dir '" + out_dir.string() + "' '" + source_path("scenarios/lab_fifo.json") +
                                   "' zero_cap.json");
  CHECK(mixed.exit_code == 2);
  bool any_report = false;
  if (fs::exists(out_dir))
    for (const auto& e : fs::recursive_directory_iterator(out_dir)) {
      UNSCOPED_INFO(e.path().string());
      any_report = true;
    }
  CHECK_FALSE(any_report);
}
#endif
