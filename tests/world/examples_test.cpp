#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "world_test_support.hpp"

namespace fs = std::filesystem;

TEST_CASE("the committed example reports regenerate byte for byte but for their diagnostics",
          "[world][examples]") {
  // Goal: any change of behaviour shows up as a change of reports/examples/, and a change of the kernel
  // alone does not. Method: for each committed report, re-run its scenario file with its seed and compare
  // the bytes with every `diagnostics` object left out of both (scripts/regen-examples.sh rewrites them
  // after an intended change; admitsim replay, which compares diagnostics too, is tests/determinism/).
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator("reports/examples"))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 10);
  for (const auto& f : files) {
    INFO(f << " (regenerate with scripts/regen-examples.sh after an intended change)");
    const std::string recorded = admit::test::slurp(f);
    const auto report = nlohmann::ordered_json::parse(recorded);
    // Parsed and rendered again, the file is its own bytes: what is compared below is the file.
    REQUIRE(admit::reports::render_report(report) == recorded);
    const std::string scenario_file = report["scenario"]["file"].get<std::string>();
    const auto seed = report["seed"].get<std::uint64_t>();
    const auto again = admit::test::run_file(scenario_file, seed);
    CHECK(admit::reports::render_report(admit::test::without_diagnostics(again.report)) ==
          admit::reports::render_report(admit::test::without_diagnostics(report)));
  }
}
