// The faults of a FIFO scenario (docs/scenarios.md, "Faults in a FIFO
// scenario"): each changes what it should, and none is a silent no-op.
#include <catch2/catch.hpp>

#include "sim/world/coverage_buckets.hpp"
#include "world_test_support.hpp"

namespace {

using admit::world::run_record;

constexpr std::int64_t ms = 1'000'000;

// One gate "api" of `max_active` with `max_waiting` and a wait deadline, work of `service` (or a whole
// service object), the requests listed (or a whole workload object), and `extra` top-level members.
std::string fifo(int max_active, int max_waiting, const std::string& service, const std::string& requests,
                 const std::string& extra, const std::string& deadline = "5s") {
  return R"({"name": "faults", "gate": {"name": "api", "kind": "fifo", "max_active": )" + std::to_string(max_active) +
         R"(, "max_waiting": )" + std::to_string(max_waiting) + R"(, "wait_deadline": ")" + deadline +
         R"("}, "service": )" + (service[0] == '{' ? service : R"({"service_time": ")" + service + R"("})") +
         R"(, "workload": )" + (requests.rfind(R"({"arrivals")", 0) == 0 ? requests : R"({"requests": [)" + requests + "]}") +
         (extra.empty() ? "" : ", " + extra) + "}";
}

using admit::test::inv;

std::string faults(const std::string& list) { return R"("faults": {"schedule": [)" + list + "]}"; }

}  // namespace

TEST_CASE("a crash loses every lease and waiter, frees the gate, and its clients see a reset", "[world][faults][crash]") {
  // Goal: the crash semantics. Method: a and b hold the gate's two slots, c waits; the process crashes at
  // 500 ms and restarts at 700 ms; `down` arrives while it is down, `later` after the restart. The
  // portal's cap is raised so the orphaned work is not a violation here (the next test shows it is).
  const std::string reqs =
      R"({"id": "a", "at": "0ms"}, {"id": "b", "at": "0ms"}, {"id": "c", "at": "100ms"},
         {"id": "down", "at": "600ms"}, {"id": "later", "at": "800ms"})";
  const auto r = admit::test::run_text(
      fifo(2, 4, R"({"service_time": "1s", "portal_cap": 10})", reqs,
           faults(R"({"at": "500ms", "kind": "crash", "target": "worker:0", "duration": "200ms"})")),
      1);
  CHECK_FALSE(r.rec.any_violation());
  for (const char* id : {"a", "b", "c"}) {
    CHECK(r.rec.outcomes.at(id).status == "connection_reset");
    CHECK(r.rec.outcomes.at(id).http_status == 0);
    CHECK(r.rec.outcomes.at(id).responded_ns == 500 * ms);
  }
  CHECK(r.rec.outcomes.at("down").status == "connection_refused");
  CHECK(r.rec.outcomes.at("later").status == "completed");  // the rebuilt gate admits it at once
  CHECK(r.rec.outcomes.at("later").responded_ns == 1800 * ms);
  CHECK(r.rec.metrics.refused.at("connection_reset") == 3);
  CHECK(r.rec.metrics.portal_inflight_max == 3);  // a and b run on at the portal beside `later`
  // The lost leases are not "leaked": the process that held them died.
  CHECK(inv(r.rec, "lease_released_once").holds);
  CHECK(inv(r.rec, "liveness").holds);
}

TEST_CASE("after a crash and restart the portal sees the orphaned work above its cap", "[world][faults][crash]") {
  // Goal: the finding the crash fault exists to show. Method: the catalogue scenario.
  const auto r = admit::test::run_file("scenarios/fifo_crash_restart.json", 1);
  const auto& p = inv(r.rec, "portal_inflight_le_cap");
  REQUIRE_FALSE(p.holds);
  CHECK(p.first->at_ns == 800 * ms);
  CHECK(inv(r.rec, "gate_inflight_le_cap").holds);
  CHECK(inv(r.rec, "lease_released_once").holds);
}

TEST_CASE("a crash without a restart refuses every later request and leaves nothing pending", "[world][faults][crash]") {
  // Goal: no duration = the process never comes back. Method: crash at 50 ms with a at work; b and c later.
  const auto r = admit::test::run_text(
      fifo(1, 1, "100ms", R"({"id": "a", "at": "0ms"}, {"id": "b", "at": "1s"}, {"id": "c", "at": "2s"})",
           faults(R"({"at": "50ms", "kind": "crash", "target": "worker:0"})")),
      1);
  CHECK_FALSE(r.rec.any_violation());
  CHECK(r.rec.outcomes.at("a").status == "connection_reset");
  CHECK(r.rec.outcomes.at("b").status == "connection_refused");
  CHECK(r.rec.outcomes.at("c").status == "connection_refused");
  CHECK(r.rec.metrics.completed == 0);
}

TEST_CASE("a stall holds deadlines, completions and arrivals to its end, in their order", "[world][faults][stall]") {
  // Goal: nothing of the process runs during a stall. Method: the catalogue scenario: a's work ends at
  // 300 ms, b's deadline falls due at 600 ms, c arrives at 700 ms, all inside a stall to 1.2 s.
  const auto r = admit::test::run_file("scenarios/fifo_stall.json", 1);
  CHECK_FALSE(r.rec.any_violation());
  CHECK(r.rec.outcomes.at("a").status == "completed");
  CHECK(r.rec.outcomes.at("a").responded_ns == 1200 * ms);
  CHECK(r.rec.outcomes.at("b").status == "wait_timeout");  // its overdue deadline ran before it could claim
  CHECK(r.rec.outcomes.at("b").responded_ns == 1200 * ms);
  CHECK(r.rec.outcomes.at("c").status == "completed");
  CHECK(r.rec.outcomes.at("c").responded_ns == 1500 * ms);
  CHECK(r.rec.outcomes.at("d").client_timed_out);  // the client is outside the process: its timer ran
  CHECK(r.rec.outcomes.at("d").responded_ns == 1800 * ms);
  // Inside the stall the gate is frozen as it was at 200 ms: a active, b waiting.
  const auto* s = r.rec.find_snapshot("api", 1100 * ms);
  REQUIRE(s != nullptr);
  CHECK(s->snap.active == 1);
  CHECK(s->snap.waiting == 1);
}

TEST_CASE("a stall shorter than the wait lets the held release promote the waiter", "[world][faults][stall]") {
  // Goal: held work runs in the order it fell due. Method: a's work ends at 300 ms, b's deadline is at
  // 1.1 s, the stall lasts from 200 ms to 1 s: the release comes first and b is promoted at 1 s.
  const auto r = admit::test::run_text(
      fifo(1, 1, "300ms", R"({"id": "a", "at": "0ms"}, {"id": "b", "at": "100ms"})",
           faults(R"({"at": "200ms", "kind": "pause", "target": "worker:0", "duration": "800ms"})"), "1s"),
      1);
  CHECK_FALSE(r.rec.any_violation());
  CHECK(r.rec.outcomes.at("a").responded_ns == 1000 * ms);
  CHECK(r.rec.outcomes.at("b").status == "completed");
  CHECK(r.rec.outcomes.at("b").responded_ns == 1300 * ms);
}

TEST_CASE("a client-timeout burst gives the requests arriving in it its read timeout", "[world][faults][burst]") {
  // Goal: [at, at + duration) gets the burst's timeout; the work goes on. Method: a before, b inside, c at the end.
  const auto r = admit::test::run_text(
      fifo(2, 0, "300ms", R"({"id": "a", "at": "0ms"}, {"id": "b", "at": "1s"}, {"id": "c", "at": "2s"})",
           faults(R"({"at": "1s", "kind": "client_timeout_burst", "duration": "1s", "client_timeout": "100ms"})")),
      1);
  CHECK_FALSE(r.rec.any_violation());
  CHECK_FALSE(r.rec.outcomes.at("a").client_timed_out);
  CHECK(r.rec.outcomes.at("b").client_timed_out);
  CHECK(r.rec.outcomes.at("b").status == "completed");  // a read timeout does not stop the server's work
  CHECK_FALSE(r.rec.outcomes.at("c").client_timed_out);  // the window is half open
  CHECK(r.rec.metrics.client_timeouts == 1);
}

TEST_CASE("a portal partition fails work that would start in it and spares work in flight", "[world][faults][partition]") {
  // Goal: 502 portal_unreachable for work starting in the window, its lease released. Method: the catalogue scenario.
  const auto r = admit::test::run_file("scenarios/fifo_portal_partition.json", 1);
  CHECK_FALSE(r.rec.any_violation());
  CHECK(r.rec.outcomes.at("a").status == "completed");
  CHECK(r.rec.outcomes.at("b").status == "portal_unreachable");
  CHECK(r.rec.outcomes.at("b").http_status == 502);
  CHECK(r.rec.outcomes.at("b").responded_ns == 300 * ms);
  CHECK(r.rec.outcomes.at("c").status == "portal_unreachable");
  CHECK(r.rec.outcomes.at("d").status == "completed");
  CHECK(r.rec.metrics.refused.at("portal_unreachable") == 2);
}

TEST_CASE("no fault of a FIFO scenario is a silent no-op", "[world][faults]") {
  // Goal: the old defect (the FIFO world never read `faults`) is gone. Method: one workload with and
  // without each fault; the metrics must differ.
  const std::string reqs =
      R"({"id": "a", "at": "0ms"}, {"id": "b", "at": "50ms"}, {"id": "c", "at": "150ms"}, {"id": "d", "at": "400ms"})";
  auto metrics_of = [&](const std::string& extra) {
    const auto r = admit::test::run_text(fifo(1, 2, "200ms", reqs, extra, "300ms"), 1);
    return r.report["metrics"].dump();
  };
  const std::string base = metrics_of("");
  for (const char* f :
       {R"({"at": "100ms", "kind": "crash", "target": "worker:0", "duration": "100ms"})",
        R"({"at": "100ms", "kind": "pause", "target": "worker:0", "duration": "500ms"})",
        R"({"at": "100ms", "kind": "partition", "target": "portal", "duration": "200ms"})",
        R"({"at": "0ms", "kind": "client_timeout_burst", "duration": "1s", "client_timeout": "10ms"})"}) {
    INFO(f);
    CHECK(metrics_of(faults(f)) != base);
  }
}

TEST_CASE("fault rates of a FIFO scenario are drawn and run", "[world][faults][rates]") {
  // Goal: faults.rates works for FIFO: the drawn faults change the run, the same seed gives the same bytes.
  const std::string text = fifo(
      2, 4, "500ms", R"({"arrivals": [{"kind": "poisson", "count": 400, "mean_gap": "100ms"}]})",
      R"("faults": {"rates": {"crash_per_hour": 200, "pause_per_hour": 200, "partition_per_hour": 200,
                              "mean_duration": "2s", "until": "40s"}})");
  const auto a = admit::test::run_text(text, 5);
  const auto b = admit::test::run_text(text, 5);
  CHECK(a.bytes == b.bytes);
  std::uint64_t faulted = 0;
  for (const char* s : {"connection_reset", "connection_refused", "portal_unreachable"})
    if (a.rec.metrics.refused.count(s) != 0) faulted += a.rec.metrics.refused.at(s);
  CHECK(faulted > 0);
}

TEST_CASE("work due at the instant a stall ends runs after the work held before it", "[world][faults][stall]") {
  // Goal: held work keeps its (time, sequence) order against work due at the stall's last instant.
  // Method: a's work ends at 300 ms inside a stall from 200 ms to 1.2 s; b's deadline falls at 1.2 s
  // exactly, on a timer armed before the stall began. a's release must come first (promoting b),
  // then b's deadline (which beats the claim): the gate logs released, promoted, released, wait_timeout.
  const auto r = admit::test::run_text(
      R"({"name": "edge", "gate": {"name": "api", "kind": "fifo", "max_active": 1, "max_waiting": 1,
          "wait_deadline": "1100ms", "event_log": 16}, "service": {"service_time": "300ms"},
          "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "100ms"}]},
          "faults": {"schedule": [{"at": "200ms", "kind": "pause", "target": "worker:0", "duration": "1s"}]},
          "cases": [{"name": "after", "snapshot": "api", "at": "1250ms"}]})",
      1);
  CHECK_FALSE(r.rec.any_violation());
  const auto* s = r.rec.find_snapshot("api", 1250 * ms);
  REQUIRE(s != nullptr);
  std::vector<std::string> order;
  for (const auto& e : s->snap.events) order.emplace_back(admit::fifo::to_string(e.st));
  CHECK(order == std::vector<std::string>{"admitted", "queued", "released", "promoted", "released", "wait_timeout"});
  CHECK(r.rec.outcomes.at("a").responded_ns == 1200 * ms);
  CHECK(r.rec.outcomes.at("b").status == "wait_timeout");
}

TEST_CASE("a crash during a stall resets the requests the stall was holding", "[world][faults][crash][stall]") {
  // Goal: requests accepted while the loop was stalled, not yet handled, are the process's too: a crash
  // resets them (found by the scenario property: they used to be dropped unanswered). Method: two
  // requests arrive inside a stall from 0 to 200 ms; the process crashes for good at 200 ms, before
  // the stall's end runs.
  const auto r = admit::test::run_text(
      fifo(1, 0, "50ms", R"({"id": "a", "at": "0ms"}, {"id": "b", "at": "0ms"})",
           faults(R"({"at": "0ms", "kind": "pause", "target": "worker:0", "duration": "200ms"},
                     {"at": "200ms", "kind": "crash", "target": "worker:0"})")),
      1);
  CHECK_FALSE(r.rec.any_violation());
  CHECK(r.rec.outcomes.at("a").status == "connection_reset");
  CHECK(r.rec.outcomes.at("b").status == "connection_reset");
  CHECK(r.rec.outcomes.at("b").responded_ns == 200 * ms);
}

TEST_CASE("a broken invariant inside a release reaches the world's caller, not std::terminate", "[world][assert]") {
  // Goal: a release that breaks the core (ADMIT_ASSERT inside lease::reset()) surfaces as
  // admit::assertion_failure from run_all, which `admitsim run` reports with the seed and the replay
  // command. Method: a core whose release drives its active count negative (a test-only mutation no file
  // can name), on a request that completes.
  admit::scenario::scenario sc = admit::scenario::load_scenario_text(
      fifo(1, 0, "10ms", R"({"id": "a", "at": "0ms"})", ""));
  sc.gates.front().fifo.mut = admit::fifo::mutation::corrupt_on_release;
  CHECK_THROWS_WITH(admit::world::run_all(sc, 1), Catch::Contains("active count went negative"));
  CHECK_THROWS_AS(admit::world::run_all(sc, 1), admit::assertion_failure);
}

TEST_CASE("the FIFO world counts each fault by the state of the process it struck", "[world][faults][coverage]") {
  // Goal: the coverage buckets of a FIFO run (coverage_buckets.hpp). Method: a stall at 0ms finds nothing in
  // flight; a crash at 500ms finds a and b holding both leases and c waiting, their work at the portal.
  const std::string reqs = R"({"id": "a", "at": "10ms"}, {"id": "b", "at": "10ms"}, {"id": "c", "at": "100ms"})";
  const auto r = admit::test::run_text(
      fifo(2, 4, R"({"service_time": "1s", "portal_cap": 10})", reqs,
           faults(R"({"at": "0ms", "kind": "pause", "target": "worker:0", "duration": "1ms"},
                     {"at": "500ms", "kind": "crash", "target": "worker:0", "duration": "200ms"})")),
      1);
  const auto bucket = [&](const std::string& name) {
    for (const auto& [n, count] : r.rec.coverage)
      if (n == name) return count;
    FAIL("no bucket " << name);
    return std::uint64_t{0};
  };
  REQUIRE(r.rec.coverage.size() == admit::world::fifo_bucket_count);
  CHECK(bucket("pause with nothing in flight") == 1);
  CHECK(bucket("pause with work at the portal") == 0);
  CHECK(bucket("crash with nothing in flight") == 0);
  CHECK(bucket("crash with a request waiting at a gate") == 1);
  CHECK(bucket("crash with every lease of a gate taken") == 1);
  CHECK(bucket("crash with work at the portal") == 1);
  CHECK(bucket("the portal reached its cap") == 0);  // 3 at most against 10
  // A search of this scenario can strike with nothing but pauses and crashes: the other kinds' buckets go.
  admit::check::probe_counts c = r.rec.coverage;
  admit::world::drop_buckets_never_struck(c, admit::scenario::load_scenario_text(
      fifo(2, 4, "1s", reqs, faults(R"({"at": "0ms", "kind": "pause", "target": "worker:0", "duration": "1ms"},
                     {"at": "500ms", "kind": "crash", "target": "worker:0", "duration": "200ms"})"))));
  CHECK(c.size() == 2 * admit::world::fifo_state_count + 1);
}
