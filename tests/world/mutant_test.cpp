#include <catch2/catch.hpp>

#include "world_test_support.hpp"

// The driver-level mutants (docs/mutants.md): each is caught by the invariant it breaks, in a small
// scenario written for it, and the same scenario with the real code holds.

namespace {

using admit::test::inv;

admit::world::run_record run_one(const std::string& text, std::uint64_t seed) {
  const auto sc = admit::scenario::load_scenario_text(text);
  auto runs = admit::world::run_all(sc, seed);
  REQUIRE(runs.size() == 1);
  return std::move(runs.front());
}

std::string with_mutation(std::string text, const std::string& mutation) {
  const std::string marker = "\"MUTATION\"";
  const auto at = text.find(marker);
  REQUIRE(at != std::string::npos);
  text.replace(at, marker.size(), "\"" + mutation + "\"");
  return text;
}

}  // namespace

TEST_CASE("releasing before the work ends lets the portal exceed the cap", "[world][mutant]") {
  // Goal: the portal monitor catches a lease freed too early. Method: two overlapping requests on one slot.
  const std::string text = R"({"name": "early_release",
    "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s", "mutation": "MUTATION"},
    "service": {"service_time": "100ms"},
    "workload": {"requests": [{"at": "0ms"}, {"at": "10ms"}]}})";
  CHECK_FALSE(run_one(with_mutation(text, "none"), 1).any_violation());
  const auto r = run_one(with_mutation(text, "release_before_work_ends"), 1);
  CHECK_FALSE(inv(r, "portal_inflight_le_cap").holds);
  CHECK(inv(r, "gate_inflight_le_cap").holds);  // the gate's own count looks fine
}

TEST_CASE("a fail-open client sends work without a permit", "[world][mutant]") {
  // Goal: fail closed is checked. Method: Redis is cut off; the real client defers (the caps hold; nothing granted
  // breaks liveness alone, never_granted), the mutant floods the portal.
  const std::string text = R"({"name": "dark", "seed": 4,
    "gate": {"kind": "lease", "limit": 1, "lease": "15s", "acquire_timeout": "2s", "mutation": "MUTATION"},
    "fleet": {"workers": 3},
    "service": {"portal_cap": 1, "service_time": "5s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 3, "every": "100ms"}]},
    "faults": {"schedule": [{"at": "0ms", "kind": "partition", "target": "redis", "duration": "1h"}]}})";
  const auto closed = run_one(with_mutation(text, "none"), 4);
  for (const auto& i : closed.invariants) CHECK(i.holds == (i.name != "liveness"));
  const auto r = run_one(with_mutation(text, "fail_open"), 4);
  CHECK_FALSE(inv(r, "portal_inflight_le_cap").holds);
}

TEST_CASE("a non-atomic check-then-add overshoots the limit in Redis itself", "[world][mutant]") {
  // Goal: atomicity matters. Method: many workers poll at once; the count and the add are separate round
  // trips, so two see room and both add.
  const std::string text = R"({"name": "race", "seed": 5,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 2, "lease": "15s", "acquire_timeout": "30s",
             "backoff": {"kind": "fixed", "delay": "1ms"}, "mutation": "MUTATION"},
    "fleet": {"workers": 8},
    "service": {"portal_cap": 2, "service_time": "50ms"},
    "workload": {"arrivals": [{"kind": "constant", "count": 40, "every": "1ms"}]}})";
  CHECK_FALSE(run_one(with_mutation(text, "none"), 5).any_violation());
  const auto r = run_one(with_mutation(text, "check_then_add"), 5);
  CHECK_FALSE(inv(r, "gate_inflight_le_cap").holds);
  CHECK(r.metrics.gate_inflight_max > 2);
}

TEST_CASE("an acquire that never reaps keeps a dead holder's permit", "[world][mutant]") {
  // Goal: lease expiry is honoured. Method: a holder crashes; later acquires must reap its permit.
  const std::string text = R"({"name": "noreap", "seed": 6,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 2, "lease": "5s", "acquire_timeout": "60s",
             "mutation": "MUTATION"},
    "fleet": {"workers": 3},
    "service": {"portal_cap": 2, "service_time": "1s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 30, "every": "500ms"}]},
    "faults": {"schedule": [{"at": "300ms", "kind": "crash", "target": "worker:0"}]}})";
  CHECK_FALSE(run_one(with_mutation(text, "none"), 6).any_violation());
  const auto r = run_one(with_mutation(text, "no_reaping"), 6);
  CHECK_FALSE(inv(r, "expired_leases_reaped").holds);
}
