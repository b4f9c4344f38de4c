// The mutant matrix (docs/mutants.md): explore, from each mutant scenario's
// bounds, catches the mutant within a fixed budget of seeds and shrinks it to
// a handful of requests and faults that still break the same invariant from
// the file on disk; the same bounds with the real code show no violation.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "sim/explore/explorer.hpp"
#include "sim/explore/scenario_json.hpp"
#include "sim/explore/shrink.hpp"
#include "sim/explore/swarm.hpp"
#include "tests/explore/explore_test_support.hpp"

namespace {

using namespace admit;

constexpr std::uint64_t seed_budget = 64;
constexpr std::uint64_t requests_handful = 6;
constexpr std::size_t faults_handful = 2;

struct mutant_case {
  const char* file;                     // under tests/explore/mutants/
  std::vector<std::string> invariants;  // what the first finding may break
};

const mutant_case mutants[] = {
    {"admit_off_by_one.json", {"gate_inflight_le_cap"}},
    {"newcomers_jump_queue.json", {"fifo_order"}},
    {"release_before_work_ends.json", {"portal_inflight_le_cap"}},
    {"leak_handover_on_cancel.json", {"lease_released_once", "liveness"}},
    {"double_release_on_timeout.json", {"portal_inflight_le_cap", "lease_released_once"}},
    {"fail_open.json", {"portal_inflight_le_cap"}},
    {"check_then_add.json", {"gate_inflight_le_cap"}},
    {"no_reaping.json", {"expired_leases_reaped"}},
};

// The same bounds with the real gate and driver.
scenario::scenario without_mutation(scenario::scenario sc) {
  for (auto& g : sc.gates) {
    g.fifo.mut = fifo::mutation::none;
    g.world_mut = scenario::world_mutation::none;
  }
  return sc;
}

explore::explore_summary search(const scenario::scenario& sc) {
  explore::explore_options opt;
  opt.seeds.count = seed_budget;
  opt.jobs = 2;
  return explore::run_explore(sc, opt);
}

}  // namespace

TEST_CASE("explore catches every mutant and shrinks it to a handful", "[explore][mutant]") {
  // Goal: the search works, for each kind of bug. Method: explore each mutant's bounds over a fixed budget, shrink
  // its first finding, run the shrunk file from disk; then the same bounds without the mutation.
  const std::filesystem::path tmp = ADMITSIM_TEST_TMP;
  std::filesystem::create_directories(tmp);
  REQUIRE(std::size(mutants) == admit::test::json_files("tests/explore/mutants").size());
  for (const auto& m : mutants) {
    INFO(m.file);
    const auto sc = scenario::load_scenario_text(test::read_bytes(test::source_path(std::string("tests/explore/mutants/") + m.file)));
    const auto found = search(sc);
    const explore::seed_outcome* first = nullptr;
    for (const auto& o : found.seeds)
      if (o.any_counterexample()) {
        first = &o;
        break;
      }
    REQUIRE(first != nullptr);
    REQUIRE_FALSE(first->error.has_value());
    const explore::run_outcome& run = first->runs.front();
    const std::string invariant = run.broken.front().name;
    CHECK(std::find(m.invariants.begin(), m.invariants.end(), invariant) != m.invariants.end());

    const auto explored = explore::explore_seed(sc, first->seed);
    const auto s = explore::shrink(explored.sc, first->seed, explore::shrink_target{run.variant, invariant});
    CHECK(s.started);
    CHECK(s.reproduced);
    CHECK(s.requests_after <= requests_handful);
    CHECK(s.faults_after <= faults_handful);
    std::cout << "mutant " << m.file << ": first caught by seed " << first->seed << " of " << seed_budget << " ("
              << found.with_violation << " seeds caught it), " << invariant << "; shrunk faults " << s.faults_before
              << " -> " << s.faults_after << ", requests " << s.requests_before << " -> " << s.requests_after
              << ", workers " << s.workers_before << " -> " << s.workers_after << " in " << s.runs << " runs\n";

    // The file as written breaks the same invariant when it is read back and run.
    const auto path = tmp / (std::string("min-") + m.file);
    {
      std::ofstream out(path, std::ios::binary);
      out << explore::render_scenario(s.minimal);
    }
    const auto from_disk = scenario::load_scenario_text(test::read_bytes(path.string()));
    const auto runs = world::run_all(from_disk, from_disk.seed);
    REQUIRE(runs.size() == 1);
    CHECK(reports::as_expected(from_disk, runs.front()));
    bool broke = false;
    for (const auto& inv : runs.front().invariants) broke = broke || (inv.name == invariant && !inv.holds);
    CHECK(broke);

    // The real code under the same bounds and seeds.
    const auto control = search(without_mutation(sc));
    CHECK(control.seeds.size() == seed_budget);
    CHECK(control.with_violation == 0);
  }
}
