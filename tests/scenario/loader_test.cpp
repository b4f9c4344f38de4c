// Tests for sim/scenario: the typed model the loader builds, section by
// section, its defaults, and the duration grammars. Rejections with their
// exact messages live in malformed_test.cpp.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/scenario/duration.hpp"
#include "sim/scenario/loader.hpp"
#include "tests/scenario/scenario_test_support.hpp"

namespace {

using namespace admit::scenario;
namespace redis = admit::redis;
using admit::sim::ms;
using admit::sim::sec;
using admit::test::rejection;

constexpr vtime_ns minute = 60 * sec;

// A minimal scenario around the given fragments (each a JSON member list).
std::string doc(const std::string& gate, const std::string& workload, const std::string& extra = "") {
  return R"({"name": "t", "gate": )" + gate + R"(, "workload": )" + workload + (extra.empty() ? "" : ", " + extra) + "}";
}
const std::string fifo_gate = R"({"kind": "fifo", "max_active": 2})";
const std::string one_request = R"({"requests": [{"id": "a", "at": "0ms"}]})";

}  // namespace

TEST_CASE("signed durations take one optional sign before the unsigned grammar") {
  // Goal: parse_signed_duration_ns accepts exactly a sign plus what parse_duration_ns accepts.
  // Method: a table of spellings and their values, and of spellings to reject.
  CHECK(parse_signed_duration_ns("-250ms") == -250 * ms);
  CHECK(parse_signed_duration_ns("+2s") == 2 * sec);
  CHECK(parse_signed_duration_ns("2s") == 2 * sec);
  CHECK(parse_signed_duration_ns("-1.5s") == -1'500 * ms);
  CHECK(parse_signed_duration_ns("-0ms") == 0);
  for (const char* bad : {"-", "+", "--1s", "+-1s", "- 1s", "1s-", "-5", "-.5s", "-1e3ms", ""})
    CHECK_FALSE(parse_signed_duration_ns(bad).has_value());
  CHECK_FALSE(parse_duration_ns("-5ms").has_value());
  CHECK_FALSE(parse_duration_ns("+5ms").has_value());
}

TEST_CASE("a duration for people is in the unit it reaches, with a few decimals") {
  // Goal: "1.996s", not "1996093750ns"; a resolution finer than the three decimals keeps more.
  // Method: a table of values and their spellings.
  CHECK(format_duration_for_people(1'996'093'750) == "1.996s");
  CHECK(format_duration_for_people(2'500 * ms) == "2.5s");
  CHECK(format_duration_for_people(350 * ms) == "350ms");
  CHECK(format_duration_for_people(12'500'000) == "12.5ms");
  CHECK(format_duration_for_people(-250 * ms) == "-250ms");
  CHECK(format_duration_for_people(0) == "0ms");
  CHECK(format_duration_for_people(7) == "7ns");
  CHECK(format_duration_for_people(1'500) == "1.5us");
  CHECK(format_duration_for_people(90 * sec) == "90s");
  CHECK(format_duration_for_people(2'987'500'000) == "2.988s");           // half away from zero
  CHECK(format_duration_for_people(999'999'600) == "1s");                 // rounds up into the next unit
  CHECK(format_duration_for_people(2'987'500'000, 100'000) == "2.9875s");  // values 100us apart read apart
  CHECK(format_duration_for_people(1'996'093'750, 1) == "1.99609375s");
  CHECK(format_duration(1'996'093'750) == "1996093750ns");  // the exact spelling stays exact
}

TEST_CASE("the lab scenario loads as before") {
  // Goal: the catalogue's first file keeps its meaning. Method: load it and check its gates, requests and cases.
  const scenario sc = load_scenario_text(admit::test::read_bytes(admit::test::source_path("scenarios/lab_fifo.json")));
  REQUIRE(sc.gates.size() == 3);
  CHECK(sc.gates[0].name == "delay");
  CHECK(sc.gates[0].kind == gate_kind::fifo);
  CHECK(sc.gates[0].fifo.wait_deadline_ns == 150 * ms);
  CHECK(sc.gates[0].cap() == 1);
  REQUIRE(sc.requests.size() == 7);
  CHECK(sc.requests[3].id == "slow_client");
  CHECK(sc.requests[3].client_timeout_ns == 100 * ms);
  CHECK(sc.requests[4].gate_index == 1);
  CHECK(sc.requests[6].fail == failure::constructor);
  CHECK(sc.arrivals.empty());
  CHECK(sc.fleet.workers == 1);
  CHECK(sc.faults.schedule.empty());
  CHECK(sc.cases.size() == 9);
}

TEST_CASE("a lease gate loads with its defaults") {
  // Goal: the lease parameters' documented defaults. Method: a lease gate with only kind and limit.
  const scenario sc = load_scenario_text(doc(R"({"kind": "lease", "limit": 8})", one_request));
  const gate_spec& g = sc.gates.at(0);
  CHECK(g.kind == gate_kind::lease);
  CHECK(g.cap() == 8);
  CHECK(g.lease.variants == std::vector<redis::variant>{redis::variant::seed});
  CHECK(g.lease.lease_ns == 15 * sec);
  CHECK(g.lease.acquire_timeout_ns == 30 * sec);
  CHECK(g.lease.backoff.k == backoff_spec::kind::fixed);
  CHECK(g.lease.backoff.delay_ns == 200 * ms);
  CHECK(g.lease.renew_every_ns == 5 * sec);
  CHECK_FALSE(g.lease.queue_timeout_ns.has_value());
  CHECK(g.lease.key == "admitsim:inflight");
}

TEST_CASE("a lease gate loads every field, and variants to compare") {
  // Goal: each lease field reaches the model. Method: a gate that sets them all, then spot checks of the rules between them.
  const scenario sc = load_scenario_text(doc(R"({"name": "fleet", "kind": "lease", "variant": ["seed", "renewal", "fair"],
      "limit": 100000, "lease": "9s", "acquire_timeout": "0ms", "renew_every": "2s", "queue_timeout": "4s",
      "backoff": {"kind": "exponential", "base": "10ms", "max": "1s", "jitter": "none"}, "key": "x:{a}"})",
                                             one_request));
  const lease_params& l = sc.gates.at(0).lease;
  CHECK(l.variants == std::vector<redis::variant>{redis::variant::seed, redis::variant::renewal, redis::variant::fair});
  CHECK(l.limit == 100'000);
  CHECK(l.lease_ns == 9 * sec);
  CHECK(l.acquire_timeout_ns == 0);
  CHECK(l.renew_every_ns == 2 * sec);
  CHECK(l.queue_timeout_ns == 4 * sec);
  CHECK(l.backoff.k == backoff_spec::kind::exponential);
  CHECK(l.backoff.base_ns == 10 * ms);
  CHECK(l.backoff.max_ns == 1 * sec);
  CHECK(l.backoff.jit == backoff_spec::jitter::none);
  CHECK(l.key == "x:{a}");
  // The default renewal period follows the lease.
  CHECK(load_scenario_text(doc(R"({"kind": "lease", "limit": 1, "lease": "3s", "variant": "renewal"})", one_request))
            .gates[0]
            .lease.renew_every_ns == 1 * sec);
  // A larger base lifts the default cap of an exponential backoff.
  CHECK(load_scenario_text(
            doc(R"({"kind": "lease", "limit": 1, "backoff": {"kind": "exponential", "base": "5s"}})", one_request))
            .gates[0]
            .lease.backoff.max_ns == 5 * sec);
  CHECK(rejection(doc(R"({"kind": "lease", "limit": 1, "variant": ["seed", "seed"]})", one_request)) ==
        "/gate/variant/1: expected a variant not listed before, got \"seed\"");
  CHECK(rejection(doc(R"({"kind": "lease", "limit": 1, "variant": []})", one_request)) ==
        "/gate/variant: expected a variant name or a list of 1 to 5 distinct variant names, got []");
  CHECK(rejection(doc(R"({"kind": "lease", "limit": 1, "queue_timeout": "1s"})", one_request)) ==
        "/gate/queue_timeout: expected \"queue_timeout\" only with the \"fair\" variant or a protocol whose calls "
        "pass {queue_timeout_ms}, got \"1s\"");
  CHECK(rejection(doc(R"({"kind": "lease", "limit": 1, "key": "has space"})", one_request)) ==
        "/gate/key: expected a Redis key of 1 to 256 printable ASCII characters without spaces, got \"has space\"");
}

TEST_CASE("two lease gates may not share a key") {
  // Goal: a key names one semaphore. Method: two gates on the default key, then on distinct keys.
  const std::string two_default = R"({"name": "t", "gates": [{"name": "a", "kind": "lease", "limit": 1},
      {"name": "b", "kind": "lease", "limit": 2}], "workload": {"requests": [{"gate": "a", "at": "0ms"}]}})";
  CHECK(rejection(two_default) ==
        "/gates/1/key: expected a Redis key that no other lease gate uses (two gates on one key share permits), got "
        "\"admitsim:inflight\"");
  // On distinct keys the gates are still refused: the lease world runs one lease gate alone (no world runs more).
  const std::string distinct = R"({"name": "t", "gates": [{"name": "a", "kind": "lease", "limit": 1},
      {"name": "b", "kind": "lease", "limit": 2, "key": "other"}],
      "workload": {"requests": [{"gate": "a", "at": "0ms"}]}})";
  CHECK(rejection(distinct) ==
        "/gates/1: expected a lease gate to be the scenario's only gate (the lease world runs one lease gate; FIFO "
        "gates run together in the FIFO world), got 2 gates");
}

TEST_CASE("fleet clocks: a default for every worker and overrides by index") {
  // Goal: clock_of gives each worker its clock. Method: a default clock and two overrides given out of order.
  const scenario sc = load_scenario_text(doc(R"({"kind": "lease", "limit": 1})", one_request, R"("fleet": {"workers": 5,
      "clock": {"offset": "-250ms", "drift_ppm": 100},
      "clocks": [{"worker": 4, "offset": "+2s"}, {"worker": 1, "drift_ppm": -50}]})"));
  const fleet_spec& f = sc.fleet;
  CHECK(f.workers == 5);
  CHECK(f.clock_of(0) == clock_spec{-250 * ms, 100});
  CHECK(f.clock_of(1) == clock_spec{-250 * ms, -50});  // the offset not given keeps the default
  CHECK(f.clock_of(2) == clock_spec{-250 * ms, 100});
  CHECK(f.clock_of(4) == clock_spec{2 * sec, 100});
  REQUIRE(f.clocks.size() == 2);
  CHECK(f.clocks[0].first == 1);  // sorted by worker
  CHECK(rejection(doc(fifo_gate, one_request, R"("fleet": {"clock": {"offset": "+25h"}})")) ==
        "/fleet/clock/offset: expected a signed duration from -24h to +24h, got \"+25h\"");
  CHECK(rejection(doc(fifo_gate, one_request, R"("fleet": {"workers": 2, "clocks": [{"worker": 0}, {"worker": 1}, {"worker": 0}]})")) ==
        "/fleet/clocks: expected a list of at most 2 clock overrides (one per worker), got [{\"worker\":0},{\"worker\":1},{\"worker\":0}]");
}

TEST_CASE("arrivals generators load per kind, with their gate and overrides") {
  // Goal: each generator kind's fields reach the model. Method: one generator of each kind beside explicit requests.
  const scenario sc = load_scenario_text(R"({"name": "t",
      "gates": [{"name": "a", "kind": "fifo", "max_active": 1}, {"name": "b", "kind": "fifo", "max_active": 1}],
      "workload": {"arrivals": [
        {"kind": "constant", "gate": "b", "count": 3, "every": "0ms"},
        {"kind": "poisson", "gate": "a", "count": 100000000, "mean_gap": "50us", "start": "1m",
         "service": {"kind": "exponential", "mean": "700ms"}, "client_timeout": "20s", "cancel_after": "1s", "fail_ppm": 250},
        {"kind": "ramp", "gate": "a", "count": 10, "gap_from": "1s", "gap_to": "10ms"},
        {"kind": "deadline_surge", "gate": "b", "count": 5000, "deadline": "30m", "gap_far": "2s", "gap_near": "10ms"}]}})");
  CHECK(sc.requests.empty());
  REQUIRE(sc.arrivals.size() == 4);
  const arrival_spec& c = sc.arrivals[0];
  CHECK(c.kind == arrival_kind::constant);
  CHECK(c.gate == "b");
  CHECK(c.gate_index == 1);
  CHECK(c.every_ns == 0);
  const arrival_spec& p = sc.arrivals[1];
  CHECK(p.kind == arrival_kind::poisson);
  CHECK(p.count == 100'000'000);
  CHECK(p.start_ns == minute);
  CHECK(p.mean_gap_ns == 50'000);
  CHECK(p.service == admit::sim::duration_dist::exponential(700 * ms));
  CHECK(p.client_timeout_ns == 20 * sec);
  CHECK(p.cancel_after_ns == 1 * sec);
  CHECK(p.fail_ppm == 250);
  CHECK(sc.arrivals[2].gap_from_ns == 1 * sec);
  CHECK(sc.arrivals[2].gap_to_ns == 10 * ms);
  const arrival_spec& s = sc.arrivals[3];
  CHECK(s.deadline_ns == 30 * minute);
  CHECK(s.gap_far_ns == 2 * sec);
  CHECK(s.gap_near_ns == 10 * ms);
  CHECK(rejection(R"({"name": "t", "gates": [{"name": "a", "kind": "fifo", "max_active": 1},
      {"name": "b", "kind": "fifo", "max_active": 1}],
      "workload": {"arrivals": [{"kind": "constant", "count": 3, "every": "1s"}]}})") ==
        "/workload/arrivals/0: missing required key \"gate\" (the scenario has several gates)");
}

TEST_CASE("a generator must end by the time limit, judged exactly or by a sound bound") {
  // Goal: no generated time can pass arrival_time_limit_ns. Method: generators just inside and just outside 2400h.
  auto with = [](const std::string& gen) { return doc(fifo_gate, R"({"arrivals": [)" + gen + "]}"); };
  // constant: exact. 2400h = 8640000s; count 8640001 at 1s ends exactly there.
  CHECK(rejection(with(R"({"kind": "constant", "count": 8640001, "every": "1s"})")).empty());
  CHECK(rejection(with(R"({"kind": "constant", "count": 8640002, "every": "1s"})")) ==
        "/workload/arrivals/0/count: expected a count whose requests arrive by 2400h (these would run to about 2401h), "
        "got 8640002");
  // A surge bounded by the deadline: 100M requests at a 1ms peak end near 1h + 100000s.
  CHECK(rejection(with(R"({"kind": "deadline_surge", "count": 100000000, "deadline": "1h", "gap_far": "24h",
      "gap_near": "1ms"})"))
            .empty());
  CHECK_FALSE(rejection(with(R"({"kind": "poisson", "count": 100000000, "mean_gap": "1s"})")).empty());
}

TEST_CASE("the workload needs at least one request; requests are optional beside arrivals") {
  // Goal: the "at least one" rule. Method: empty lists, then arrivals alone.
  CHECK(rejection(doc(fifo_gate, R"({})")) ==
        "/workload: expected at least one request: a non-empty \"requests\" or \"arrivals\" list");
  CHECK(rejection(doc(fifo_gate, R"({"requests": []})")) ==
        "/workload: expected at least one request: a non-empty \"requests\" or \"arrivals\" list");
  CHECK(rejection(doc(fifo_gate, R"({"arrivals": [{"kind": "constant", "count": 1, "every": "1s"}]})")).empty());
}

TEST_CASE("cases may name generated requests within their generator's count") {
  // Goal: "arrivals/G/N" resolves against the generators. Method: the last request, one past it, and bad spellings.
  const std::string wl = R"({"requests": [{"id": "a", "at": "0ms"}],
      "arrivals": [{"kind": "constant", "count": 10, "every": "1s"}]})";
  auto with_case = [&](const std::string& target) {
    return doc(fifo_gate, wl, R"("cases": [{"name": "c", "response": ")" + target + R"("}])");
  };
  CHECK(rejection(with_case("arrivals/0/9")).empty());
  CHECK(rejection(with_case("a")).empty());
  CHECK(rejection(with_case("arrivals/0/10")) ==
        "/cases/0/response: expected the id of a request of this scenario, got \"arrivals/0/10\"");
  CHECK(rejection(with_case("arrivals/1/0")) ==
        "/cases/0/response: expected the id of a request of this scenario, got \"arrivals/1/0\"");
  CHECK(rejection(with_case("arrivals/0/09")) ==
        "/cases/0/response: expected a name of 1 to 64 letters, digits, '_', '-' or '.', got \"arrivals/0/09\"");
  CHECK(generated_request_id(3, 17) == "arrivals/3/17");
}

TEST_CASE("fleet.on_acquire_timeout: defer by default, requeue_and_exit, refused in a FIFO scenario") {
  // Goal: the worker model's default, its values, a bad value and the FIFO refusal. Method: load and compare.
  const std::string lease_gate = R"({"kind": "lease", "limit": 1})";
  CHECK(load_scenario_text(doc(lease_gate, one_request)).fleet.on_acquire_timeout ==
        admit::scenario::acquire_timeout_policy::defer);
  CHECK(load_scenario_text(doc(lease_gate, one_request, R"("fleet": {"on_acquire_timeout": "defer"})"))
            .fleet.on_acquire_timeout == admit::scenario::acquire_timeout_policy::defer);
  CHECK(load_scenario_text(doc(lease_gate, one_request, R"("fleet": {"workers": 3, "on_acquire_timeout": "requeue_and_exit"})"))
            .fleet.on_acquire_timeout == admit::scenario::acquire_timeout_policy::requeue_and_exit);
  CHECK(rejection(doc(lease_gate, one_request, R"("fleet": {"on_acquire_timeout": "exit"})")) ==
        "/fleet/on_acquire_timeout: expected one of \"defer\", \"requeue_and_exit\", got \"exit\"");
  CHECK(rejection(doc(lease_gate, one_request, R"("fleet": {"on_acquire_timeout": true})")) ==
        "/fleet/on_acquire_timeout: expected one of \"defer\", \"requeue_and_exit\", got true");
  CHECK(rejection(doc(fifo_gate, one_request, R"("fleet": {"on_acquire_timeout": "requeue_and_exit"})")).rfind(
            "/fleet: not read by a FIFO scenario", 0) == 0);
}

TEST_CASE("checks.stop_at_first: false by default, a boolean") {
  CHECK_FALSE(load_scenario_text(doc(fifo_gate, one_request)).checks.stop_at_first);
  CHECK(load_scenario_text(doc(fifo_gate, one_request, R"("checks": {"stop_at_first": true})")).checks.stop_at_first);
  CHECK(rejection(doc(fifo_gate, one_request, R"("checks": {"stop_at_first": 1})")) ==
        "/checks/stop_at_first: expected true or false, got 1");
}

TEST_CASE("service: the over-cap policy and the distribution cap") {
  // Goal: over_cap's default and values; distributions stay within the kernel's cap. Method: load and compare.
  CHECK(load_scenario_text(doc(fifo_gate, one_request)).service.over_cap == service_spec::over_cap_policy::reject_429);
  const std::string lease_gate = R"({"kind": "lease", "limit": 1})";
  CHECK(load_scenario_text(doc(lease_gate, one_request, R"("service": {"over_cap": "reject_429"})")).service.over_cap ==
        service_spec::over_cap_policy::reject_429);
  CHECK(load_scenario_text(doc(lease_gate, one_request, R"("service": {"over_cap": "serve"})")).service.over_cap ==
        service_spec::over_cap_policy::serve);
  CHECK(rejection(doc(lease_gate, one_request, R"("service": {"over_cap": "queue"})")) ==
        "/service/over_cap: a portal that queues connections above its cap is not modelled; expected \"reject_429\" or \"serve\"");
  // on_client_close: keep_work by default, free_slot read by the lease world, refused by the FIFO world.
  CHECK(load_scenario_text(doc(lease_gate, one_request)).service.on_client_close ==
        service_spec::client_close_policy::keep_work);
  CHECK(load_scenario_text(doc(lease_gate, one_request, R"("service": {"on_client_close": "free_slot"})"))
            .service.on_client_close == service_spec::client_close_policy::free_slot);
  CHECK(rejection(doc(lease_gate, one_request, R"("service": {"on_client_close": "drop"})")) ==
        "/service/on_client_close: expected one of \"keep_work\", \"free_slot\", got \"drop\"");
  CHECK(rejection(doc(fifo_gate, one_request, R"("service": {"on_client_close": "keep_work"})")).rfind(
            "/service/on_client_close: not read by a FIFO scenario", 0) == 0);
  CHECK(load_scenario_text(doc(fifo_gate, one_request, R"("service": {"service_time": "1000000s"})"))
            .service.service_time == admit::sim::duration_dist::fixed(admit::sim::duration_cap_ns));
  CHECK(rejection(doc(fifo_gate, one_request,
                      R"("service": {"service_time": {"kind": "uniform", "min": "1ms", "max": "1000001s"}})")) ==
        "/service/service_time/max: expected a duration from 0ms to 1000000s, got \"1000001s\"");
}

TEST_CASE("a lease scenario's partitions cut links to Redis, the only network its world has") {
  // Goal: no partition is accepted and then ignored. Method: the portal, and a link between two workers, are
  // refused in a lease scenario; a worker and Redis are accepted.
  const std::string lease2 = R"({"kind": "lease", "limit": 2})";
  auto with = [&](const std::string& fault) {
    return doc(lease2, one_request, R"("fleet": {"workers": 2}, "faults": {"schedule": [)" + fault + "]}");
  };
  const std::string why = "for a lease scenario, a worker or \"redis\" (as \"target\"), or a worker and \"redis\" "
                          "(as \"between\"): the lease world's network is the links between the workers and Redis";
  CHECK(rejection(with(R"({"at": "1s", "kind": "partition", "target": "portal", "duration": "1s"})")) ==
        "/faults/schedule/0/target: expected " + why + ", got \"portal\"");
  CHECK(rejection(with(R"({"at": "1s", "kind": "partition", "between": ["worker:0", "worker:1"], "duration": "1s"})")) ==
        "/faults/schedule/0/between: expected " + why + ", got [\"worker:0\",\"worker:1\"]");
  CHECK(rejection(with(R"({"at": "1s", "kind": "partition", "between": ["portal", "worker:1"], "duration": "1s"})")) ==
        "/faults/schedule/0/between: expected " + why + ", got [\"portal\",\"worker:1\"]");
  CHECK(rejection(with(R"({"at": "1s", "kind": "partition", "between": ["redis", "worker:1"], "duration": "1s"})")).empty());
  CHECK(rejection(with(R"({"at": "1s", "kind": "partition", "target": "worker:1", "duration": "1s"})")).empty());
}

TEST_CASE("faults: every kind with its targets and fields") {
  // Goal: the fault schedule's model and per-kind defaults. Method: one fault of each kind in a lease scenario.
  const scenario sc = load_scenario_text(doc(R"({"kind": "lease", "limit": 2})", one_request, R"("fleet": {"workers": 3},
      "faults": {"schedule": [
        {"at": "1s", "kind": "crash", "target": "worker:2"},
        {"at": "2s", "kind": "pause", "target": "redis", "duration": "500ms"},
        {"at": "3s", "kind": "partition", "between": ["worker:0", "redis"], "duration": "10s"},
        {"at": "3s", "kind": "partition", "target": "redis", "duration": "1s"},
        {"at": "4s", "kind": "redis_restart", "persistence": "aof_everysec", "duration": "2s"},
        {"at": "5s", "kind": "redis_failover", "replication_lag": "1s"},
        {"at": "6s", "kind": "clock_step", "target": "worker:1", "step": "-3s"},
        {"at": "7s", "kind": "client_timeout_burst", "duration": "1m", "client_timeout": "1s"}],
      "rates": {"crash_per_hour": 2, "clock_step_per_hour": 1, "max_step": "5s", "until": "1h"}},
      "checks": {"liveness_horizon": "2h"})"));
  const auto& f = sc.faults.schedule;
  REQUIRE(f.size() == 8);
  CHECK(f[0].kind == fault_kind::crash);
  CHECK(f[0].target == node_ref{node_ref::kind::worker, 2});
  CHECK_FALSE(f[0].duration_ns.has_value());  // never restarts
  CHECK(f[1].target == node_ref{node_ref::kind::redis, 0});
  CHECK(f[1].duration_ns == 500 * ms);
  CHECK_FALSE(f[2].target.has_value());
  CHECK(f[2].between == std::make_pair(node_ref{node_ref::kind::worker, 0}, node_ref{node_ref::kind::redis, 0}));
  CHECK(f[3].target == node_ref{node_ref::kind::redis, 0});
  CHECK(f[4].persist == persistence::aof_everysec);
  CHECK(f[4].duration_ns == 2 * sec);
  CHECK(f[4].target == node_ref{node_ref::kind::redis, 0});
  CHECK(f[5].replication_lag_ns == 1 * sec);
  CHECK(f[5].duration_ns == 0);
  CHECK(f[6].step_ns == -3 * sec);
  CHECK(f[7].target == node_ref{node_ref::kind::portal, 0});
  CHECK(f[7].client_timeout_ns == 1 * sec);
  REQUIRE(sc.faults.rates.has_value());
  CHECK(sc.faults.rates->per_hour_of(admit::scenario::fault_kind::crash) == 2);
  CHECK(sc.faults.rates->per_hour_of(admit::scenario::fault_kind::clock_step) == 1);
  CHECK(sc.faults.rates->max_step_ns == 5 * sec);
  CHECK(sc.faults.rates->mean_duration_ns == 5 * sec);
  CHECK(sc.faults.rates->until_ns == 60 * minute);
  CHECK(sc.checks.liveness_horizon_ns == 120 * minute);
  CHECK(to_string(node_ref{node_ref::kind::worker, 12}) == "worker:12");
  // Rates that are all zero need no end.
  CHECK(rejection(doc(fifo_gate, one_request, R"("faults": {"rates": {"crash_per_hour": 0}})")).empty());
  CHECK(sc.faults.rates->restart_persistence ==
        std::vector<persistence>{persistence::none, persistence::aof_everysec});
}

TEST_CASE("faults: aof_always, and the persistences a drawn restart picks from") {
  // Goal: persistence aof_always; rates.restart_persistence read, checked, refused where nothing reads it.
  // Method: load and compare.
  const std::string lease = R"({"kind": "lease", "limit": 1})";
  const scenario always = load_scenario_text(doc(lease, one_request, R"("faults": {"schedule": [
      {"at": "1s", "kind": "redis_restart", "persistence": "aof_always"}]})"));
  CHECK(always.faults.schedule.front().persist == persistence::aof_always);
  const scenario drawn = load_scenario_text(doc(lease, one_request, R"("faults": {"rates": {
      "redis_restart_per_hour": 10, "restart_persistence": ["aof_always", "none"], "until": "1m"}})"));
  CHECK(drawn.faults.rates->restart_persistence == std::vector<persistence>{persistence::aof_always, persistence::none});
  CHECK(rejection(doc(lease, one_request, R"("faults": {"rates": {"redis_restart_per_hour": 10,
      "restart_persistence": ["none", "none"], "until": "1m"}})")) ==
        "/faults/rates/restart_persistence/1: expected a list of 1 to 3 distinct persistences (\"none\", "
        "\"aof_everysec\", \"aof_always\"), got \"none\"");
  CHECK(rejection(doc(lease, one_request, R"("faults": {"rates": {"redis_restart_per_hour": 10,
      "restart_persistence": [], "until": "1m"}})"))
            .rfind("/faults/rates/restart_persistence: expected a list of 1 to 3", 0) == 0);
  CHECK(rejection(doc(lease, one_request, R"("faults": {"rates": {"crash_per_hour": 10,
      "restart_persistence": ["none"], "until": "1m"}})")) ==
        "/faults/rates/restart_persistence: expected no \"restart_persistence\" without a redis_restart_per_hour "
        "above 0 (no drawn restart reads it)");
}

TEST_CASE("fault targets are checked against the fleet and the gates") {
  // Goal: a target names a node the scenario has. Method: worker indexes, leading zeros, and redis without a lease gate.
  auto fault = [](const std::string& gate, const std::string& f) {
    return doc(gate, one_request, R"("fleet": {"workers": 2}, "faults": {"schedule": [)" + f + "]}");
  };
  const std::string lease = R"({"kind": "lease", "limit": 1})";
  CHECK(rejection(fault(lease, R"({"at": "1s", "kind": "crash", "target": "worker:1"})")).empty());
  CHECK(rejection(fault(lease, R"({"at": "1s", "kind": "crash", "target": "worker:01"})")) ==
        "/faults/schedule/0/target: expected a node: \"worker:0\" to \"worker:1\" (fleet.workers is 2), got \"worker:01\"");
  CHECK(rejection(fault(lease, R"({"at": "1s", "kind": "crash", "target": "redis"})")) ==
        "/faults/schedule/0/target: expected a node: \"worker:0\" to \"worker:1\" (fleet.workers is 2), got \"redis\"");
  CHECK(rejection(fault(lease, R"({"at": "1s", "kind": "pause", "target": "portal", "duration": "1s"})")) ==
        "/faults/schedule/0/target: expected a node: \"worker:0\" to \"worker:1\" or \"redis\" (fleet.workers is 2), got "
        "\"portal\"");
  CHECK(rejection(fault(fifo_gate, R"({"at": "1s", "kind": "pause", "target": "redis", "duration": "1s"})")) ==
        "/faults/schedule/0/target: expected for a FIFO scenario, \"worker:0\" (the server process; a pause is its "
        "event-loop stall), got \"redis\"");
  CHECK(rejection(fault(lease, R"({"at": "1s", "kind": "redis_restart", "target": "portal"})")) ==
        "/faults/schedule/0/target: expected a node: \"redis\", got \"portal\"");
  CHECK(rejection(fault(lease, R"({"at": "1s", "kind": "crash"})")) ==
        "/faults/schedule/0: missing required key \"target\" (a node: \"worker:0\" to \"worker:1\" (fleet.workers is 2))");
}

TEST_CASE("a FIFO scenario accepts the faults its world honours and refuses the rest") {
  // Goal: no fault of a FIFO scenario is silently ignored (docs/scenarios.md, "Faults in a FIFO scenario").
  // Method: each accepted form loads; each other kind or target is refused naming the path and what a
  // FIFO scenario accepts.
  auto fault = [](const std::string& f) { return doc(fifo_gate, one_request, R"("faults": {"schedule": [)" + f + "]}"); };
  CHECK(rejection(fault(R"({"at": "1s", "kind": "crash", "target": "worker:0"})")).empty());
  CHECK(rejection(fault(R"({"at": "1s", "kind": "crash", "target": "worker:0", "duration": "1s"})")).empty());
  CHECK(rejection(fault(R"({"at": "1s", "kind": "pause", "target": "worker:0", "duration": "1s"})")).empty());
  CHECK(rejection(fault(R"({"at": "1s", "kind": "partition", "target": "portal", "duration": "1s"})")).empty());
  CHECK(rejection(fault(R"({"at": "1s", "kind": "partition", "between": ["worker:0", "portal"], "duration": "1s"})"))
            .empty());
  CHECK(rejection(fault(R"({"at": "1s", "kind": "partition", "between": ["portal", "worker:0"], "duration": "1s"})"))
            .empty());
  CHECK(rejection(fault(R"({"at": "1s", "kind": "client_timeout_burst", "duration": "1s", "client_timeout": "1s"})"))
            .empty());
  CHECK(rejection(fault(R"({"at": "1s", "kind": "clock_step", "target": "worker:0", "step": "1s"})")) ==
        "/faults/schedule/0/kind: expected a fault kind a FIFO scenario honours (\"crash\", \"pause\", \"partition\" "
        "or \"client_timeout_burst\"; \"clock_step\" is refused: the FIFO gate reads no wall clock), got "
        "\"clock_step\"");
  CHECK(rejection(fault(R"({"at": "1s", "kind": "pause", "target": "portal", "duration": "1s"})")) ==
        "/faults/schedule/0/target: expected for a FIFO scenario, \"worker:0\" (the server process; a pause is its "
        "event-loop stall), got \"portal\"");
  CHECK(rejection(fault(R"({"at": "1s", "kind": "crash", "target": "portal"})")) ==
        "/faults/schedule/0/target: expected for a FIFO scenario, \"worker:0\" (the server process holding the "
        "gates), got \"portal\"");
  const std::string cut_expected =
      "expected for a FIFO scenario, \"portal\" (as \"target\") or [\"worker:0\", \"portal\"] (as \"between\"): the "
      "process's link to the portal";
  CHECK(rejection(fault(R"({"at": "1s", "kind": "partition", "target": "worker:0", "duration": "1s"})")) ==
        "/faults/schedule/0/target: " + cut_expected + ", got \"worker:0\"");
  CHECK(rejection(fault(R"({"at": "1s", "kind": "redis_restart"})")) ==
        "/faults/schedule/0/kind: expected a fault kind a FIFO scenario honours (\"crash\", \"pause\", \"partition\" "
        "or \"client_timeout_burst\"; \"redis_restart\" is refused: Redis faults need a lease gate), got "
        "\"redis_restart\"");
  CHECK(rejection(doc(fifo_gate, one_request, R"("faults": {"rates": {"clock_step_per_hour": 1, "until": "1h"}})")) ==
        "/faults/rates/clock_step_per_hour: a FIFO scenario has no clock to step (the FIFO gate reads no wall clock); "
        "expected 0 or no key");
  CHECK(rejection(doc(fifo_gate, one_request,
                      R"("faults": {"rates": {"crash_per_hour": 1, "pause_per_hour": 1, "partition_per_hour": 1, "until": "1h"}})"))
            .empty());
}

TEST_CASE("checks and expect: the liveness horizon and per-variant verdicts") {
  // Goal: the new checks and expect fields. Method: load them, and the per-variant rules.
  const scenario sc = load_scenario_text(doc(R"({"kind": "lease", "limit": 1, "variant": ["seed", "fencing"]})",
                                             one_request, R"("checks": {"horizon": "1h", "liveness_horizon": "30m"},
      "expect": {"verdict": "pass", "variants": {"seed": {"verdict": "violation", "violated": ["portal_inflight_le_cap"]},
                                                 "fencing": {"verdict": "pass"}}})"));
  CHECK(sc.checks.liveness_horizon_ns == 30 * minute);
  REQUIRE(sc.expect.variants.size() == 2);
  CHECK(sc.expect.variants[0].variant == "seed");
  CHECK(sc.expect.variants[0].verdict == "violation");
  CHECK(sc.expect.variants[0].violated == std::vector<std::string>{"portal_inflight_le_cap"});
  CHECK(sc.expect.variants[1].variant == "fencing");
  CHECK(sc.expect.variants[1].verdict == "pass");
  CHECK(rejection(doc(fifo_gate, one_request, R"("expect": {"verdict": "pass", "variants": {"bogus": {"verdict": "pass"}}})")) ==
        "/expect/variants/bogus: expected no per-variant verdict in a scenario without a lease gate, got \"bogus\"");
  // Unknown names are refused with the names the scenario's world checks (the FIFO world's here).
  std::string names;
  for (const auto& row : admit::check::invariant_table)
    if (row.worlds & admit::check::world_fifo) names += std::string(names.empty() ? "" : ", ") + "\"" + row.name + "\"";
  CHECK(rejection(doc(fifo_gate, one_request, R"("expect": {"verdict": "violation", "violated": ["bogus"]})")) ==
        "/expect/violated/0: expected one of " + names + ", got \"bogus\"");
  CHECK(rejection(doc(fifo_gate, one_request, R"("checks": {"invariants": ["liveness", "liveness"]})")) ==
        "/checks/invariants/1: expected an invariant not listed before, got \"liveness\"");
}

TEST_CASE("error values are shown short, escaped and on one line") {
  // Goal: a message stays one readable line whatever the input. Method: a long string, a control character, a
  // wide array, and a number the parser cannot hold in an array.
  const std::string long_name(100, 'x');
  CHECK(rejection(R"({"name": ")" + long_name + R"("})") ==
        "/name: expected a name of 1 to 64 letters, digits, '_', '-' or '.', got \"" + std::string(56, 'x') + "...");
  CHECK(rejection("{\"name\": \"a\\nb\"}") ==
        "/name: expected a name of 1 to 64 letters, digits, '_', '-' or '.', got \"a\\nb\"");
  CHECK(rejection(R"({"name": "t", "gate": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]})") ==
        "/gate: expected a gate object, got [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22...");
  CHECK(rejection(R"({"x": [1, 2, 1e999]})") == "/x/2: expected a number within range, got a number overflow parsing '1e999'");
}
