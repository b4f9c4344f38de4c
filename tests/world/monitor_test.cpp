#include <catch2/catch.hpp>

#include "world_test_support.hpp"

namespace {

std::string gate_scenario(const std::string& gate, const std::string& requests, const std::string& extra = "") {
  return R"({"name": "monitor", "gate": )" + gate + R"(, "service": {"service_time": "100ms"},
    "workload": {"requests": [)" + requests + "]}" + (extra.empty() ? "" : ", " + extra) + "}";
}

using admit::test::inv;

}  // namespace

TEST_CASE("the real gate holds every invariant under a promotion race", "[world][monitor]") {
  // Goal: baseline for the mutant tests below. Method: the same races with mutation none.
  const auto r = admit::test::run_text(
      gate_scenario(R"({"kind": "fifo", "max_active": 1, "max_waiting": 2, "wait_deadline": "95ms"})",
                    R"({"id": "a", "at": "0ms"}, {"id": "b", "at": "5ms"}, {"id": "c", "at": "10ms", "cancel_at": "100ms"})"),
      1);
  CHECK_FALSE(r.rec.any_violation());
  CHECK(r.report["verdict"] == "pass");
}

TEST_CASE("an off-by-one admit breaks gate_inflight_le_cap; with stop_at_first it stops the run", "[world][monitor][mutant]") {
  // Goal: the cap monitor can fail. Method: mutation admit_off_by_one with two overlapping requests.
  const std::string gate = R"({"kind": "fifo", "max_active": 1, "max_waiting": 1, "mutation": "admit_off_by_one"})";
  const std::string requests = R"({"id": "a", "at": "0ms"}, {"id": "b", "at": "10ms"})";
  {
    // By default the run goes on to its end, and the window is measured: b's lease is active from 10ms
    // until a's ends (a 100ms service), 2 leases against a cap of 1.
    const auto r = admit::test::run_text(gate_scenario(gate, requests), 1);
    const auto& i = inv(r.rec, "gate_inflight_le_cap");
    REQUIRE_FALSE(i.holds);
    CHECK(i.first->at_ns == 10'000'000);
    CHECK(i.windows == 1);
    REQUIRE(i.worst);
    CHECK(i.worst->value == 2);
    CHECK(i.worst->bound == 1);
    CHECK(i.time_in_violation_ns > 0);
    CHECK(r.rec.metrics.simulated_ns > 10'000'000);
    CHECK(r.report["invariants"]["gate_inflight_le_cap"]["violations"]["windows"] == 1);
  }
  const auto r = admit::test::run_text(gate_scenario(gate, requests, R"("checks": {"stop_at_first": true})"), 1);
  const auto& i = inv(r.rec, "gate_inflight_le_cap");
  REQUIRE_FALSE(i.holds);
  CHECK(i.first->at_ns == 10'000'000);
  CHECK_THAT(i.first->detail, Catch::Contains("above max_active 1"));
  CHECK(r.report["verdict"] == "violation");
  CHECK(r.report["expected"]["met"] == false);
  REQUIRE(r.report.contains("trace"));
  CHECK(r.report["trace"]["entries"].size() > 0);
  CHECK(r.rec.metrics.simulated_ns == 10'000'000);  // the run stopped at the violation
}

TEST_CASE("a leaked handover breaks lease_released_once and liveness", "[world][monitor][mutant]") {
  // Goal: the leak is caught. Method: b is promoted at 100 ms and cancelled at the same instant before it
  // resumes; the leaking gate never releases the handed-over lease.
  const auto r = admit::test::run_text(
      gate_scenario(
          R"({"kind": "fifo", "max_active": 1, "max_waiting": 2, "wait_deadline": "1s", "mutation": "leak_handover_on_cancel"})",
          R"({"id": "a", "at": "0ms"}, {"id": "b", "at": "10ms", "cancel_at": "100ms"})"),
      1);
  CHECK_FALSE(inv(r.rec, "liveness").holds);
  CHECK_FALSE(inv(r.rec, "lease_released_once").holds);
  CHECK(r.rec.outcomes.at("b").status == "cancelled");
}

TEST_CASE("a newcomer overtaking the queue breaks fifo_order", "[world][monitor][mutant]") {
  // Goal: the FIFO monitor can fail. Method: with newcomers_jump_queue a release leaves the slot free
  // and a later arrival takes it while b still waits.
  const auto r = admit::test::run_text(
      gate_scenario(
          R"({"kind": "fifo", "max_active": 1, "max_waiting": 2, "wait_deadline": "1s", "mutation": "newcomers_jump_queue"})",
          R"({"id": "a", "at": "0ms"}, {"id": "b", "at": "10ms"}, {"id": "c", "at": "150ms"})"),
      1);
  const auto& i = inv(r.rec, "fifo_order");
  REQUIRE_FALSE(i.holds);
  CHECK(i.first->at_ns == 150'000'000);
}

TEST_CASE("a double release at the deadline lets the portal exceed its cap", "[world][monitor][mutant]") {
  // Goal: an extra release is caught by its consequence. Method: b is promoted at 100 ms and its deadline
  // undoes the handover at the same instant; the broken gate releases twice, so while c still works two
  // newcomers are admitted and the portal sees three requests against a cap of two.
  const auto r = admit::test::run_text(
      gate_scenario(
          R"({"kind": "fifo", "max_active": 2, "max_waiting": 1, "wait_deadline": "95ms", "mutation": "double_release_on_timeout"})",
          R"({"id": "a", "at": "0ms"}, {"id": "c", "at": "0ms", "service": "500ms"}, {"id": "b", "at": "5ms"},
             {"id": "d", "at": "150ms"}, {"id": "e", "at": "160ms"})"),
      1);
  const auto& i = inv(r.rec, "portal_inflight_le_cap");
  REQUIRE_FALSE(i.holds);
  CHECK(i.first->at_ns == 160'000'000);
  CHECK(inv(r.rec, "gate_inflight_le_cap").holds);  // the gate itself believes it is within its cap
}

TEST_CASE("a double release with nothing else active is counted as unbalanced", "[world][monitor][mutant]") {
  // Goal: the release-once monitor sees releases the core refuses. Method: with one slot, the extra release
  // finds active at 0 and the core counts it as unbalanced.
  const auto r = admit::test::run_text(
      gate_scenario(
          R"({"kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "95ms", "mutation": "double_release_on_timeout"})",
          R"({"id": "a", "at": "0ms"}, {"id": "b", "at": "5ms"})"),
      1);
  const auto& i = inv(r.rec, "lease_released_once");
  REQUIRE_FALSE(i.holds);
  CHECK(i.first->at_ns == 100'000'000);
}

TEST_CASE("a client read timeout does not free the slot", "[world][client_timeout]") {
  // Goal: the lab's client_timeout semantics. Method: the client gives up at 20 ms; a second request
  // arriving at 50 ms must still queue because the first one's work runs until 100 ms.
  const auto r = admit::test::run_text(
      gate_scenario(R"({"kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s"})",
                    R"({"id": "a", "at": "0ms", "client_timeout": "20ms"}, {"id": "b", "at": "50ms"})"),
      1);
  CHECK_FALSE(r.rec.any_violation());
  CHECK(r.rec.outcomes.at("a").client_timed_out);
  CHECK(r.rec.outcomes.at("a").status == "completed");
  CHECK(r.rec.outcomes.at("b").responded_ns == 200'000'000);  // waited for a's work, then ran 100 ms
}

TEST_CASE("cancelling a handler mid-work holds the lease until the work ends", "[world][cancel]") {
  // Goal: finish_worker semantics in the world. Method: cancel a at 30 ms; b queued at 40 ms is promoted
  // only when a's work ends at 100 ms.
  const auto r = admit::test::run_text(
      gate_scenario(R"({"kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s"})",
                    R"({"id": "a", "at": "0ms", "cancel_at": "30ms"}, {"id": "b", "at": "40ms"})"),
      1);
  CHECK_FALSE(r.rec.any_violation());
  CHECK(r.rec.outcomes.at("a").status == "cancelled");
  CHECK(r.rec.outcomes.at("a").responded_ns == 100'000'000);
  CHECK(r.rec.outcomes.at("b").responded_ns == 200'000'000);
}

TEST_CASE("a handler cancelled before its first step answers 499 and takes no slot", "[world][cancel]") {
  // Goal: a cancellation at the arrival instant is a 499 with nothing acquired and no gate event, not an
  // error of the run. Method: a is cancelled at its arrival on a gate with one slot and no queue; b,
  // arriving at the same instant after it, must be admitted at once (a queue_full would mean a held the
  // slot) and run from 0 to 100 ms. Only b ever gets a lease.
  const auto r = admit::test::run_text(
      gate_scenario(R"({"kind": "fifo", "max_active": 1, "max_waiting": 0, "wait_deadline": "1s"})",
                    R"({"id": "a", "at": "0ms", "cancel_at": "0ms"}, {"id": "b", "at": "0ms"})"),
      1);
  CHECK_FALSE(r.rec.any_violation());
  CHECK(r.rec.outcomes.at("a").status == "cancelled");
  CHECK(r.rec.outcomes.at("a").http_status == 499);
  CHECK(r.rec.outcomes.at("a").responded_ns == 0);
  CHECK(r.rec.outcomes.at("b").status == "completed");
  CHECK(r.rec.outcomes.at("b").responded_ns == 100'000'000);
  CHECK(r.rec.metrics.refused.count("queue_full") == 0);
  CHECK(r.rec.metrics.wait_ns.count() == 1);  // b's lease alone
}

TEST_CASE("a run cut off at its horizon names the horizon, not its last event", "[world][liveness]") {
  // Goal: the message gives the horizon's time. Method: one request whose work lasts 10 min; with a 1 min
  // horizon the last event is the arrival at 10 ms and the work's end lies beyond the horizon. The run
  // is inconclusive (the work it did not reach is not judged), and says where it was cut off.
  const auto r = admit::test::run_text(
      R"({"name": "cut", "gate": {"kind": "fifo", "max_active": 1}, "service": {"service_time": "10m"},
          "workload": {"requests": [{"id": "a", "at": "10ms"}]}, "checks": {"horizon": "1m"}})",
      1);
  CHECK(inv(r.rec, "liveness").holds);
  REQUIRE(r.rec.inconclusive);
  CHECK(r.rec.inconclusive->kind == "horizon");
  CHECK(r.rec.inconclusive->detail.find("horizon 1m") != std::string::npos);
  CHECK(r.rec.inconclusive->detail.find("10ms") == std::string::npos);
}
