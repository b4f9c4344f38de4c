// Verdicts on a team's own protocol that can be trusted: each defect a user met with a protocol of their own
// (a crash, an abort, a false pass, a false alarm) has a scenario here, written for it, and the behaviour the run
// must show instead. Method: run the scenario through the library as the CLI does, and read the run record.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "world_test_support.hpp"

using json = nlohmann::ordered_json;
using admit::world::run_record;

namespace {

// The runs of a scenario document (protocol files, if named, read relative to the repository's root).
std::vector<run_record> run_doc(const json& doc, std::uint64_t seed) {
  json parsed;
  const admit::scenario::scenario sc =
      admit::scenario::load_scenario_text(doc.dump(2), parsed, {".", admit::scenario::plain_file_reader()});
  return admit::world::run_all(sc, seed);
}

const admit::world::invariant_result* find_inv(const run_record& rec, const std::string& name) {
  for (const auto& i : rec.invariants)
    if (i.name == name) return &i;
  return nullptr;
}

// A protocol that polls its acquire every 20ms and renews on a timer (caller-clock scores).
json polling_renewer_gate() {
  return json::parse(R"({"kind": "lease", "protocol": "scenarios/protocols/caller_clock_renew/protocol.json",
                         "limit": 2, "lease": "5s"})");
}

}  // namespace

TEST_CASE("a worker that crashes while its call is lost sends nothing more, and a restart after it is safe",
          "[world][trust]") {
  // Goal: a crash (with a restart) that lands while the worker's acquire call is lost on a cut link ends that
  // call at once: the crashed generation polls no more, and its coroutine, resuming after the restart, no longer
  // touches the cancellation signal the restart replaced (a use after free, a segfault in Release). Method: one
  // worker, its link cut before its first acquire, a crash of 100ms inside the cut; the trace must show no call
  // of the crashed token after the crash.
  json doc = {{"name", "crash_in_lost_call"}, {"gate", polling_renewer_gate()}};
  doc["fleet"] = {{"workers", 1}};
  doc["service"] = json::parse(R"({"portal_cap": 2, "service_time": "1s", "client_timeout": "20s"})");
  doc["workload"] = json::parse(R"({"requests": [{"at": "1s"}, {"at": "1500ms"}]})");
  doc["faults"]["schedule"] = json::parse(R"([
    {"at": "900ms", "kind": "partition", "between": ["worker:0", "redis"], "duration": "3s"},
    {"at": "1200ms", "kind": "crash", "target": "worker:0", "duration": "100ms"}])");
  const std::vector<run_record> runs = run_doc(doc, 1);
  REQUIRE(runs.size() == 1);
  const run_record& rec = runs.front();
  CHECK(std::string(rec.verdict()) == "pass");
  bool crashed = false;
  int later_calls_of_crashed_token = 0;
  int grants_after = 0;
  for (const auto& e : rec.trace) {
    if (e.source == "fault" && e.what == "crash worker:0") crashed = true;
    if (crashed && e.what.find("w0-1") != std::string::npos) ++later_calls_of_crashed_token;
    if (crashed && e.what == "acquire w0-2 -> 1") ++grants_after;
  }
  CHECK(crashed);
  CHECK(later_calls_of_crashed_token == 0);
  CHECK(grants_after == 1);
}

TEST_CASE("crashes with restarts overlapping every Redis fault end every run with a verdict", "[world][trust]") {
  // Goal: the seeds that crashed the run (exit 139) before the crashed generation's call was ended end with a
  // verdict. Method: the polling renewer under drawn crashes (always restarting), worker and Redis pauses,
  // partitions, restarts and failovers, all within the first 8s; every seed must give a run record with a verdict.
  json doc = {{"name", "crashes_over_redis_faults"}, {"gate", polling_renewer_gate()}};
  doc["fleet"] = {{"workers", 3}};
  doc["service"] = json::parse(R"({"portal_cap": 2, "service_time": {"kind": "uniform", "min": "1s", "max": "3s"},
                                    "client_timeout": "20s"})");
  doc["workload"] = json::parse(R"({"arrivals": [{"kind": "constant", "count": 40, "every": "200ms"}]})");
  doc["faults"]["rates"] = json::parse(R"({"crash_per_hour": 600, "pause_per_hour": 600, "partition_per_hour": 600,
    "redis_restart_per_hour": 300, "redis_failover_per_hour": 300, "mean_duration": "700ms", "until": "8s"})");
  for (const std::uint64_t seed : {7, 23, 120, 139, 142}) {
    INFO("seed " << seed);
    const std::vector<run_record> runs = run_doc(doc, seed);
    REQUIRE(runs.size() == 1);
    const std::string verdict = runs.front().verdict();
    CHECK((verdict == "pass" || verdict == "violation" || verdict == "inconclusive"));
    CHECK(runs.front().metrics.simulated_ns > 8'000'000'000);
  }
}

TEST_CASE("a reply rule that reads a refusal as a grant makes the run inconclusive, naming the reply", "[world][trust]") {
  // Goal: a client that believes it holds a permit the server's holders do not show is no longer an internal
  // assertion (an abort with no report) but an inconclusive run that names the operation, the reply, the rule and
  // the holders key. Method: an acquire that answers 0 when full, read by the rule not_nil; the fourth request
  // finds the gate full, its 0 is read as a grant.
  json doc = json::parse(R"({"name": "not_nil_refusal",
    "gate": {"kind": "lease", "limit": 2, "lease": "5s", "acquire_timeout": "30s",
      "protocol": {"format": "admitsim-protocol/1", "name": "notnil",
        "scripts": {"acquire": {"source": "if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end redis.call('ZADD', KEYS[1], 1, ARGV[1]) return 1"}},
        "acquire": {"script": "acquire", "keys": ["{key}"], "args": ["{token}", "{limit}"], "granted_when": "not_nil"},
        "release": {"command": ["ZREM", "{key}", "{token}"]}}},
    "fleet": {"workers": 4},
    "service": {"portal_cap": 2, "service_time": "1s", "client_timeout": "20s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 40, "every": "200ms"}]}})");
  const std::vector<run_record> runs = run_doc(doc, 1);
  REQUIRE(runs.size() == 1);
  const run_record& rec = runs.front();
  REQUIRE(rec.inconclusive.has_value());
  CHECK(rec.inconclusive->kind == "protocol_inconsistent");
  CHECK(rec.inconclusive->detail ==
        "the protocol's acquire replied (integer) 0 for token w2-3 (worker 2) at 0.4s, which its rule not_nil reads as "
        "a grant, but the token is not among the holders at \"admitsim:inflight\" (the protocol's holders): either the "
        "rule reads a refusal as a grant, or holders does not describe where the script keeps its permits");
  // What it saw before (the script scores its permits 1, so none is ever reaped) is still reported.
  const admit::world::invariant_result* reaped = find_inv(rec, "expired_leases_reaped");
  REQUIRE(reaped != nullptr);
  CHECK_FALSE(reaped->holds);
}
