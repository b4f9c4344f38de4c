#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "world_test_support.hpp"

namespace fs = std::filesystem;

TEST_CASE("the committed example reports regenerate byte for byte but for their diagnostics",
          "[world][examples][heavy]") {
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

TEST_CASE("the examples' comparison leaves out diagnostics and nothing else", "[world][examples]") {
  // Goal: the comparison above cannot pass vacuously. Method: a FIFO and a lease report, each with its
  // diagnostics edited (equal after without_diagnostics) and with a metric edited (different).
  for (const char* f : {"scenarios/lab_fifo.json", "scenarios/clock_skew.json"}) {
    INFO(f);
    const auto run = admit::test::run_file(f, 1);
    auto kernel = run.report;
    auto metric = run.report;
    if (kernel.contains("variants")) {
      REQUIRE(kernel["variants"].size() == 2);
      for (auto& v : kernel["variants"])
        v["diagnostics"]["events"] = v["diagnostics"]["events"].get<std::uint64_t>() + 1;
      kernel["variants"].front()["diagnostics"]["sequence_numbers"] = 0;
      metric["variants"].back()["metrics"]["requests"] = 0;
    } else {
      kernel["diagnostics"]["events"] = kernel["diagnostics"]["events"].get<std::uint64_t>() + 1;
      kernel["diagnostics"]["sequence_numbers"] = 0;
      metric["metrics"]["requests"] = 0;
    }
    CHECK(kernel != run.report);
    CHECK(admit::test::without_diagnostics(kernel) == admit::test::without_diagnostics(run.report));
    CHECK(admit::test::without_diagnostics(metric) != admit::test::without_diagnostics(run.report));
  }
}
