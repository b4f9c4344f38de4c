// search_compare: how many seeds each search strategy needs to its first
// violation, on the catalogue's known breaks and the mutants of docs/mutants.md
// (docs/explore.md, "Guided search"; the table in docs/performance.md).
//
// For each case and each of --starts starting seeds (0, 100000, 200000, ...),
// a search of each strategy runs from that seed until its first seed with a
// violation, or --cap seeds (then the count is the cap, and the table marks it
// with ">="). The table gives, per case and strategy, the median of those
// counts and the cases where the guided median is lower, equal and higher.
// Every count is deterministic (run_explore's seeds and a guided source's
// plans do not depend on --jobs), so two runs print the same table.
//
// --check exits 1 unless the guided search needs fewer seeds than the swarm on
// most of the cases where the swarm's median is above guided_lag (below it the
// guided search's first seeds are the swarm's own, and the two tie), and never
// ten times as many on any case.
//
//   build/bench/search_compare [--cap N] [--starts K] [--jobs J] [--check] [CASE...]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/explore/explorer.hpp"
#include "sim/explore/matrix.hpp"
#include "sim/scenario/loader.hpp"

namespace {

using namespace admit;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct study_case {
  std::string name;
  scenario::scenario sc;
};

// The seeds from `first` until the first violation, at most `cap`.
std::uint64_t seeds_to_violation(const scenario::scenario& sc, explore::search_strategy strategy, std::uint64_t first,
                                 std::uint64_t cap, unsigned jobs, bool& censored) {
  explore::explore_options opt;
  opt.seeds.first = first;
  opt.seeds.count = cap;
  opt.jobs = jobs;
  opt.mode.strategy = strategy;
  opt.enough = [](const explore::explore_totals& t) { return t.violating != 0; };
  const explore::explore_totals t = explore::run_explore(explore::for_search(sc), opt, [](explore::seed_outcome&&) {});
  censored = t.violating == 0;
  return t.ran;
}

std::uint64_t median(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t cap = 3000;
  std::uint64_t starts = 20;
  unsigned jobs = 2;
  bool check = false;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::uint64_t {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "search_compare: %s needs a number\n", a.c_str());
        std::exit(2);
      }
      return std::strtoull(argv[++i], nullptr, 10);
    };
    if (a == "--cap") cap = value();
    else if (a == "--starts") starts = value();
    else if (a == "--jobs") jobs = static_cast<unsigned>(value());
    else if (a == "--check") check = true;
    else if (a == "--help" || a == "-h") {
      std::printf("usage: search_compare [--cap N] [--starts K] [--jobs J] [--check] [CASE...]\n");
      return 0;
    } else only.push_back(a);
  }
  if (cap == 0 || starts == 0 || jobs == 0) {
    std::fprintf(stderr, "search_compare: --cap, --starts and --jobs take numbers of at least 1\n");
    return 2;
  }
  std::vector<study_case> cases;
  // The catalogue matrix's rarer breaks (docs/matrix.md: 16 of 300 seeds or fewer) and two commoner ones.
  const std::string matrix_file = std::string(ADMITSIM_SOURCE_DIR) + "/scenarios/matrix/catalogue.json";
  const explore::matrix_spec spec = explore::load_matrix(read_file(matrix_file), matrix_file,
                                                         [](const std::string& p) { return read_file(p); });
  const std::vector<std::pair<std::string, std::string>> cells = {
      {"process_grace_hold", "pauses"},        {"process_grace_hold", "redis_restart"},
      {"process_grace_hold", "redis_failover"}, {"process_grace_hold", "all_faults"},
      {"process_grace", "pauses"},             {"restart_grace", "redis_restart"},
      {"restart_grace", "redis_failover"},     {"restart_grace", "pauses"},
      {"server_time", "redis_failover"},       {"seed", "pauses"},
      {"fair", "pauses"},                      {"run_fleet", "partition"},
      {"hold_to_end", "all_faults"},           {"free_slot", "all_faults"},
  };
  for (const auto& [design, fault] : cells)
    for (const auto& c : spec.cells)
      if (spec.table.designs[c.design].name == design && spec.table.faults[c.fault].name == fault)
        cases.push_back({design + " x " + fault, c.sc});
  for (const char* m : {"admit_off_by_one", "newcomers_jump_queue", "release_before_work_ends", "leak_handover_on_cancel",
                        "double_release_on_timeout", "fail_open", "check_then_add", "no_reaping"})
    cases.push_back({std::string("mutant ") + m,
                     scenario::load_scenario_text(read_file(std::string(ADMITSIM_SOURCE_DIR) + "/tests/explore/mutants/" + m + ".json"))});
  if (!only.empty())
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [&](const study_case& c) { return std::find(only.begin(), only.end(), c.name) == only.end(); }),
                cases.end());

  std::printf("| case | swarm: median seeds to the first violation | guided | guided / swarm |\n|---|---|---|---|\n");
  std::size_t fewer = 0, equal = 0, more = 0, contested = 0, contested_fewer = 0;
  bool order_of_magnitude = false;
  for (const study_case& c : cases) {
    std::vector<std::uint64_t> counts[2];
    bool censored_any[2] = {false, false};
    const explore::search_strategy strategies[2] = {explore::search_strategy::swarm, explore::search_strategy::guided};
    for (int s = 0; s < 2; ++s)
      for (std::uint64_t k = 0; k < starts; ++k) {
        bool censored = false;
        counts[s].push_back(seeds_to_violation(c.sc, strategies[s], k * 100'000, cap, jobs, censored));
        censored_any[s] = censored_any[s] || censored;
      }
    const std::uint64_t m_swarm = median(counts[0]), m_guided = median(counts[1]);
    const double ratio = static_cast<double>(m_guided) / static_cast<double>(m_swarm);
    std::printf("| %s | %s%llu | %s%llu | %.2f |\n", c.name.c_str(), censored_any[0] ? ">=" : "",
                static_cast<unsigned long long>(m_swarm), censored_any[1] ? ">=" : "",
                static_cast<unsigned long long>(m_guided), ratio);
    std::fflush(stdout);
    (m_guided < m_swarm ? fewer : m_guided == m_swarm ? equal : more) += 1;
    if (m_swarm > explore::guided_lag) {
      ++contested;
      if (m_guided < m_swarm) ++contested_fewer;
    }
    if (m_guided >= 10 * m_swarm) order_of_magnitude = true;
  }
  std::printf("\n%zu cases: guided needs fewer seeds on %zu, as many on %zu, more on %zu; of the %zu whose swarm "
              "median is above %llu seeds, fewer on %zu. Medians over %llu starting seeds, cap %llu seeds.\n",
              cases.size(), fewer, equal, more, contested, static_cast<unsigned long long>(explore::guided_lag),
              contested_fewer, static_cast<unsigned long long>(starts), static_cast<unsigned long long>(cap));
  if (check && (order_of_magnitude || 2 * contested_fewer <= contested)) {
    std::fprintf(stderr, "search_compare: the guided search %s\n",
                 order_of_magnitude ? "needed ten times the swarm's seeds on a case"
                                    : "did not need fewer seeds than the swarm on most contested cases");
    return 1;
  }
  return 0;
}
