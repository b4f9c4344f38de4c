// The run_fleet worker model (fleet.on_acquire_timeout requeue_and_exit)
// beside defer-and-continue: what each leaves behind, why the report says
// so, and that a requeue never loses or duplicates an item.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/check/causes.hpp"
#include "sim/world/lease_world.hpp"
#include "world_test_support.hpp"

using json = nlohmann::ordered_json;
using admit::world::invariant_result;
using admit::world::run_record;

namespace {

admit::scenario::scenario load(const json& doc) {
  json parsed;
  return admit::scenario::load_scenario_text(doc.dump(2), parsed, {".", admit::scenario::plain_file_reader()});
}

using admit::test::inv;

std::uint64_t ended(const run_record& rec) {
  std::uint64_t n = rec.metrics.completed;
  for (const auto& [how, count] : rec.metrics.refused) n += count;
  return n;
}

// Two workers, one permit, four items; Redis is cut off from every worker for the first 5s, longer than the 1s
// acquire budget, so every acquire in it gives up.
json two_workers(const char* model) {
  return json::parse(std::string(R"({"name": "run_fleet_small", "seed": 1,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 1, "lease": "15s", "acquire_timeout": "1s"},
    "fleet": {"workers": 2, "on_acquire_timeout": ")") + model + R"("},
    "service": {"portal_cap": 1, "service_time": "3s", "client_timeout": "20s"},
    "workload": {"requests": [{"at": "0ms"}, {"at": "10ms"}, {"at": "20ms"}, {"at": "30ms"}]},
    "faults": {"schedule": [{"at": "0ms", "kind": "partition", "target": "redis", "duration": "5s"}]}})");
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Every item that arrived ended once or is left in the queue, and only a fleet with nobody left leaves any.
void require_items_conserved(const run_record& rec) {
  INFO("seed " << rec.seed << ": requests " << rec.metrics.requests << ", ended " << ended(rec) << ", left "
               << rec.lease->items_left);
  REQUIRE_FALSE(rec.inconclusive.has_value());
  CHECK(ended(rec) + rec.lease->items_left == rec.metrics.requests);
  const invariant_result& live = inv(rec, "liveness");
  if (rec.lease->items_left == 0) {
    // Every item ended: live, unless nothing was ever granted (a run that granted nothing is never a pass).
    for (const auto& c : live.causes) CHECK(c.kind == "never_granted");
  } else {
    REQUIRE_FALSE(live.holds);
    REQUIRE_FALSE(live.causes.empty());
    CHECK(live.causes[0].kind == "fleet_exhausted");
    // Beside it, only never_granted: in an outage from the start the run granted nothing at all.
    for (std::size_t c = 1; c < live.causes.size(); ++c) CHECK(live.causes[c].kind == "never_granted");
  }
}

// A fleet of four on two permits, with a short acquire budget, under drawn crashes (each restarted), pauses,
// partitions and Redis restarts: requeues, exits and restarts of exited workers all happen.
json faulty_fleet() {
  return json::parse(R"({"name": "run_fleet_faults", "seed": 1,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 2, "lease": "5s", "acquire_timeout": "1500ms"},
    "fleet": {"workers": 4, "on_acquire_timeout": "requeue_and_exit"},
    "service": {"portal_cap": 2, "service_time": {"kind": "uniform", "min": "200ms", "max": "2s"}, "client_timeout": "20s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 60, "every": "300ms"}]},
    "faults": {"rates": {"crash_per_hour": 240, "partition_per_hour": 240, "pause_per_hour": 240,
                         "redis_restart_per_hour": 60, "mean_duration": "3s", "until": "20s"}},
    "checks": {"horizon": "1h"}})");
}

}  // namespace

TEST_CASE("run_fleet: every worker exits after acquire timeouts and items are left behind", "[world][run_fleet]") {
  // Goal: requeue_and_exit leaves the queue with nobody to take it, as a liveness violation that says why.
  // Method: both workers' acquires give up in a Redis outage; the report's metrics and cause.
  const auto sc = load(two_workers("requeue_and_exit"));
  const auto runs = admit::world::run_all(sc, 1);
  REQUIRE(runs.size() == 1);
  const run_record& rec = runs.front();
  CHECK(rec.lease->requeue_and_exit);
  CHECK(rec.lease->items_requeued == 2);
  CHECK(rec.lease->workers_exited == 2);
  CHECK(rec.lease->items_left == 4);
  CHECK(ended(rec) == 0);
  const invariant_result& live = inv(rec, "liveness");
  REQUIRE_FALSE(live.holds);
  REQUIRE_FALSE(live.causes.empty());
  CHECK(live.causes[0].kind == "fleet_exhausted");
  // Beside it, only never_granted: in an outage from the start the run granted nothing at all.
  for (std::size_t c = 1; c < live.causes.size(); ++c) CHECK(live.causes[c].kind == "never_granted");
  INFO(live.causes[0].example);
  CHECK(live.causes[0].example.rfind("all 2 workers exited after acquire timeouts (the last at 00:00:01", 0) == 0);
  CHECK(ends_with(live.causes[0].example, "); 4 items left in the queue"));
  REQUIRE(admit::check::find_cause("fleet_exhausted") != nullptr);
  require_items_conserved(rec);
  // The requeued items went to the tail, behind the two that never left the queue: items 3 and 4 first.
  const std::string report = admit::test::run_text(two_workers("requeue_and_exit").dump(), 1).bytes;
  CHECK(report.find("requeued w0-1 and exited (unreachable)") != std::string::npos);
  CHECK(report.find("\"items_left\": 4") != std::string::npos);
}

TEST_CASE("defer-and-continue ends every item of the same run", "[world][run_fleet]") {
  // Goal: the default model gives up on items but leaves none. Method: the same outage under defer.
  const auto runs = admit::world::run_all(load(two_workers("defer")), 1);
  const run_record& rec = runs.front();
  CHECK_FALSE(rec.lease->requeue_and_exit);
  // Every item ended; liveness breaks only on progress: the outage outlasted every item's acquire budget, so
  // nothing was ever granted (never_granted), which is never a pass.
  const invariant_result& live = inv(rec, "liveness");
  REQUIRE_FALSE(live.holds);
  REQUIRE(live.causes.size() == 1);
  CHECK(live.causes[0].kind == "never_granted");
  CHECK(ended(rec) == 4);
  CHECK(rec.metrics.refused.at("deferred_unreachable") >= 2);
  CHECK(rec.lease->workers_exited == 0);
  // The report writes no run_fleet metrics for a defer run (catalogue reports stay as they were).
  const std::string report = admit::test::run_text(two_workers("defer").dump(), 1).bytes;
  CHECK(report.find("items_requeued") == std::string::npos);
}

TEST_CASE("run_fleet: a crashed worker and an exited one; a restart brings an exited worker back", "[world][run_fleet]") {
  // Goal: the cause counts every way the fleet emptied, and a restart runs the loop afresh.
  // Method: worker 1 crashes for good at once, worker 0 exits in the outage; then, in a second run, worker 0
  // (exited) crashes at 6s and restarts at 7s, after the outage, and ends every item.
  json doc = two_workers("requeue_and_exit");
  doc["faults"]["schedule"].push_back(json{{"at", "0ms"}, {"kind", "crash"}, {"target", "worker:1"}});
  {
    const auto runs = admit::world::run_all(load(doc), 1);
    const invariant_result& live = inv(runs.front(), "liveness");
    REQUIRE_FALSE(live.holds);
    REQUIRE_FALSE(live.causes.empty());
    CHECK(live.causes[0].kind == "fleet_exhausted");
    // Beside it, only never_granted: in an outage from the start the run granted nothing at all.
    for (std::size_t c = 1; c < live.causes.size(); ++c) CHECK(live.causes[c].kind == "never_granted");
    INFO(live.causes[0].example);
    CHECK(live.causes[0].example.rfind("all 2 workers gone: 1 exited after acquire timeouts (the last at ", 0) == 0);
    CHECK(ends_with(live.causes[0].example, "), 1 crashed, never restarted; 4 items left in the queue"));
    require_items_conserved(runs.front());
  }
  doc = two_workers("requeue_and_exit");
  doc["faults"]["schedule"].push_back(
      json{{"at", "6s"}, {"kind", "crash"}, {"target", "worker:0"}, {"duration", "1s"}});
  const auto runs = admit::world::run_all(load(doc), 1);
  const run_record& rec = runs.front();
  CHECK(inv(rec, "liveness").holds);
  CHECK(rec.lease->workers_exited == 2);
  CHECK(rec.lease->items_left == 0);
  CHECK(rec.metrics.completed == 4);
  require_items_conserved(rec);
}

TEST_CASE("run_fleet: a worker that exited and crashed afterwards still counts as exited", "[world][run_fleet]") {
  // Goal: fleet_exhausted names a fleet emptied by a drain and an exit, whatever befell the exited worker after
  // (the run_fleet property found it with RC_PARAMS="seed=59", once fair's waiter released on giving up).
  // Method: fair, two workers, one permit. Worker 1's acquire gives up at 2.3s behind worker 0's permit and its
  // release runs; worker 0's release answers at the same instant, finds the queue empty after the last arrival and
  // returns; worker 1 then requeues its item and exits, and crashes at 2.4s. The item is left with nobody to take it.
  const json doc = json::parse(R"({"name": "run_fleet_drained", "seed": 1,
    "gate": {"kind": "lease", "variant": "fair", "limit": 1, "lease": "10s", "acquire_timeout": "1s"},
    "fleet": {"workers": 2, "on_acquire_timeout": "requeue_and_exit"},
    "service": {"portal_cap": 1, "service_time": "1400ms", "client_timeout": "20s"},
    "workload": {"requests": [{"at": "900ms"}, {"at": "1300ms"}]},
    "faults": {"schedule": [{"at": "2400ms", "kind": "crash", "target": "worker:1"}]}})");
  const auto runs = admit::world::run_all(load(doc), 1);
  const run_record& rec = runs.front();
  CHECK(rec.lease->workers_exited == 1);
  CHECK(rec.lease->items_left == 1);
  const invariant_result& live = inv(rec, "liveness");
  REQUIRE_FALSE(live.holds);
  REQUIRE(live.causes.size() == 1);
  CHECK(live.causes[0].kind == "fleet_exhausted");
  INFO(live.causes[0].example);
  CHECK(live.causes[0].example ==
        "all 2 workers gone: 1 exited after acquire timeouts (the last at 00:00:02.302), 1 found the queue empty after "
        "the last arrival and returned; 1 item left in the queue");
  require_items_conserved(rec);
}

TEST_CASE("run_fleet: the cap holds while the fleet shrinks", "[world][run_fleet]") {
  // Goal: requeue_and_exit changes liveness only. Method: the catalogue's run_fleet_surge: its safety invariants
  // hold, and the portal never saw more than its cap.
  const auto sc = admit::scenario::load_scenario_file("scenarios/run_fleet_surge.json");
  const auto runs = admit::world::run_all(sc, sc.seed);
  for (const auto& r : runs) {
    for (const auto& i : r.invariants) {
      INFO(i.name);
      CHECK(i.holds == (i.name != "liveness"));
    }
    CHECK(r.metrics.portal_inflight_max <= 8);
    require_items_conserved(r);
  }
}

TEST_CASE("run_fleet: a requeue never loses or duplicates an item, under drawn faults", "[world][run_fleet]") {
  // Goal: every item that arrives ends exactly once or is reported left in the queue. Method: 40 seeds of a faulty
  // fleet; each run's endings plus the items left add up to its arrivals, and only an emptied fleet leaves any.
  const auto sc = load(faulty_fleet());
  std::uint64_t requeued = 0, left_runs = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const auto runs = admit::world::run_all(sc, seed);
    for (const auto& r : runs) {
      require_items_conserved(r);
      requeued += r.lease->items_requeued;
      left_runs += r.lease->items_left != 0;
    }
  }
  // The seeds exercise the requeue, and some leave items behind.
  CHECK(requeued > 20);
  CHECK(left_runs > 0);
}

TEST_CASE("the conservation check fails against a requeue that drops the item", "[world][run_fleet][mutant]") {
  // Goal: the check above can fail. Method: the same seeds with lease_run_options::mutant_requeue_drops_item;
  // the endings plus the items left fall short of the arrivals in the runs that requeue.
  const auto sc = load(faulty_fleet());
  admit::world::lease_run_options opts;
  opts.mutant_requeue_drops_item = true;
  std::uint64_t short_runs = 0, runs_that_requeue = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const run_record r = admit::world::run_lease_scenario(sc, seed, admit::redis::variant::server_time, opts);
    if (r.inconclusive) continue;
    runs_that_requeue += r.lease->items_requeued != 0;
    short_runs += ended(r) + r.lease->items_left != r.metrics.requests;
  }
  CHECK(runs_that_requeue > 0);
  CHECK(short_runs == runs_that_requeue);
}
