#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "world_test_support.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> catalogue() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator("scenarios"))
    if (e.path().extension() == ".json" && e.path().filename() != "schema.json" &&
        e.path().filename().string().rfind("bench_", 0) != 0)
      files.push_back("scenarios/" + e.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("every catalogue scenario comes out as it expects", "[world][catalogue][heavy]") {
  // Goal: the catalogue's declared verdicts hold, per lease variant too. Method: run each file with its
  // own seed through run_all and check each run against its expectation.
  const auto files = catalogue();
  REQUIRE(files.size() >= 10);
  for (const auto& f : files) {
    const auto sc = admit::scenario::load_scenario_file(f);
    const auto runs = admit::world::run_all(sc, sc.seed);
    REQUIRE_FALSE(runs.empty());
    for (const auto& r : runs) {
      INFO(f << " variant '" << r.variant << "' seed " << r.seed);
      for (const auto& inv : r.invariants)
        if (inv.first) INFO(inv.name << " broken at " << inv.first->at_ns << ": " << inv.first->detail);
      CHECK(admit::reports::as_expected(sc, r));
    }
  }
}

TEST_CASE("the lease catalogue shows the seed design breaking and a hardened variant holding", "[world][lease]") {
  // Goal: the comparisons the catalogue exists for. Method: for the scenarios that pit the seed against a
  // hardened variant, the seed run breaks the portal cap and the other run holds every invariant.
  for (const char* f : {"scenarios/clock_skew.json", "scenarios/lease_shorter_than_request.json",
                        "scenarios/march1_surge.json"}) {
    INFO(f);
    const auto sc = admit::scenario::load_scenario_file(f);
    const auto runs = admit::world::run_all(sc, sc.seed);
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].variant == "seed");
    // The portal refuses above its cap (reject_429): the attempts went above it, the open connections did not.
    REQUIRE(runs[0].lease);
    CHECK(runs[0].lease->portal_attempted_max > sc.service.portal_cap.value());
    CHECK(runs[0].metrics.portal_inflight_max <= sc.service.portal_cap.value());
    CHECK(runs[1].variant != "seed");
    CHECK_FALSE(runs[1].any_violation());
    CHECK(runs[1].lease->portal_attempted_max <= sc.service.portal_cap.value());
  }
}

TEST_CASE("a crashed holder's permit comes back after one lease", "[world][lease]") {
  // Goal: lease expiry reclaims a dead holder's permit. Method: one permit, the holder crashes at 1 s;
  // the next item can only start once the 5 s lease has aged out.
  const std::string text = R"({"name": "crash", "seed": 3,
    "gate": {"kind": "lease", "limit": 1, "lease": "5s", "acquire_timeout": "60s"},
    "fleet": {"workers": 2},
    "service": {"portal_cap": 1, "service_time": "2s", "client_timeout": "20s"},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "500ms"}]},
    "faults": {"schedule": [{"at": "1s", "kind": "crash", "target": "worker:0"}]}})";
  const auto sc = admit::scenario::load_scenario_text(text);
  const auto runs = admit::world::run_all(sc, 3);
  REQUIRE(runs.size() == 1);
  const auto& r = runs[0];
  CHECK_FALSE(r.any_violation());
  CHECK(r.metrics.completed == 1);
  CHECK(r.metrics.refused.at("crashed") == 1);
  // b waited from 0.5 s until a's lease (taken at ~0 s) aged out after 5 s.
  CHECK(r.metrics.wait_ns.max() >= 4'500'000'000);
  CHECK(r.metrics.wait_ns.max() <= 5'300'000'000);
}

TEST_CASE("a worker that crashes before its loop first runs handles nothing until it restarts", "[world][lease]") {
  // Goal: a crash at time 0 (before the worker's coroutine has taken a step) is an ordinary crash, not an
  // error of the run. Method: worker 0 crashes at 0 for 3 s, worker 1 for good; the two items arrive at 0
  // and wait in the queue until worker 0 is back, then run one after the other.
  const std::string text = R"({"name": "crash0", "seed": 3,
    "gate": {"kind": "lease", "limit": 1, "lease": "15s", "acquire_timeout": "60s"},
    "fleet": {"workers": 2},
    "service": {"portal_cap": 1, "service_time": "1s", "client_timeout": "20s"},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "0ms"}]},
    "faults": {"schedule": [{"at": "0s", "kind": "crash", "target": "worker:0", "duration": "3s"},
                            {"at": "0s", "kind": "crash", "target": "worker:1"}]}})";
  const auto sc = admit::scenario::load_scenario_text(text);
  const auto runs = admit::world::run_all(sc, 3);
  REQUIRE(runs.size() == 1);
  const auto& r = runs[0];
  CHECK_FALSE(r.any_violation());
  CHECK(r.metrics.completed == 2);
  CHECK(r.metrics.wait_ns.max() >= 4'000'000'000);  // from 3 s on, one after the other: the second waited to 4 s
}

TEST_CASE("workers fail closed while Redis is unreachable", "[world][lease]") {
  // Goal: no request reaches the portal without a confirmed permit. Method: Redis is cut off for the whole
  // run; every item must be deferred and the portal must see nothing. Nothing granted while work arrived is
  // never a pass: liveness breaks, on never_granted alone.
  const std::string text = R"({"name": "dark", "seed": 4,
    "gate": {"kind": "lease", "limit": 2, "lease": "15s", "acquire_timeout": "3s"},
    "fleet": {"workers": 3},
    "service": {"portal_cap": 2, "service_time": "1s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 6, "every": "100ms"}]},
    "faults": {"schedule": [{"at": "0ms", "kind": "partition", "target": "redis", "duration": "1h"}]}})";
  const auto sc = admit::scenario::load_scenario_text(text);
  const auto runs = admit::world::run_all(sc, 4);
  REQUIRE(runs.size() == 1);
  const auto& r = runs[0];
  for (const auto& i : r.invariants) {
    INFO(i.name);
    CHECK(i.holds == (i.name != "liveness"));
    if (i.name == "liveness") {
      REQUIRE(i.causes.size() == 1);
      CHECK(i.causes[0].kind == "never_granted");
    }
  }
  CHECK(r.metrics.portal_inflight_max == 0);
  CHECK(r.metrics.completed == 0);
  CHECK(r.lease->deferred == 6);
  CHECK(r.metrics.refused.at("deferred_unreachable") == 6);
}

TEST_CASE("lease runs are deterministic", "[world][lease][determinism]") {
  // Goal: same seed, same bytes, for a lease scenario with faults and jitter. Method: run twice, compare reports.
  const std::string text = admit::test::slurp("scenarios/redis_partition.json");
  const auto a = admit::test::run_text(text, 99, "scenarios/redis_partition.json");
  const auto b = admit::test::run_text(text, 99, "scenarios/redis_partition.json");
  CHECK(a.bytes == b.bytes);
}
