// Goal: admitsim::sim builds and links a simulator user against the install,
// and the installed scenarios load from there. Method: load the scenario
// named on the command line (by default the installed redis_restart_grace,
// whose protocol and Lua files are found by relative path), run every run of
// its seed, and exit 0 when each verdict is the one the scenario expects.
#include <cstdio>
#include <exception>
#include <string>

#include "reports/report.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/world.hpp"

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1] : std::string(ADMITSIM_CONSUMER_DATA_DIR) + "/scenarios/redis_restart_grace.json";
  try {
    const admit::scenario::scenario sc = admit::scenario::load_scenario_file(path);
    const auto records = admit::world::run_all(sc, sc.seed);
    if (records.empty()) {
      std::fprintf(stderr, "sim_user: %s gave no run\n", path.c_str());
      return 1;
    }
    for (const auto& rec : records) {
      std::printf("sim_user: %s[%s] seed=%llu: %s\n", sc.name.c_str(), rec.variant.c_str(),
                  static_cast<unsigned long long>(rec.seed), rec.verdict());
      if (!admit::reports::as_expected(sc, rec)) {
        std::fprintf(stderr, "sim_user: %s[%s]: verdict %s is not the expected one\n", sc.name.c_str(),
                     rec.variant.c_str(), rec.verdict());
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sim_user: %s: %s\n", path.c_str(), e.what());
    return 1;
  }
  return 0;
}
