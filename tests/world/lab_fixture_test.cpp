#include <catch2/catch.hpp>

#include "world_test_support.hpp"

using json = nlohmann::ordered_json;

TEST_CASE("lab_fifo reproduces every case of the lab's recorded run", "[world][lab]") {
  // Goal: the simulation matches the lab case by case. Method: run scenarios/lab_fifo.json and
  // compare each case with tests/fixtures/lab-recorded-output.json (a copy of the lab's output).
  const json fixture = json::parse(admit::test::slurp("tests/fixtures/lab-recorded-output.json"));
  const auto run = admit::test::run_file("scenarios/lab_fifo.json", 1);
  const json& cases = run.report["cases"];
  REQUIRE(fixture["cases"].size() == 9);
  std::vector<std::string> fixture_order, report_order;
  for (auto it = fixture["cases"].begin(); it != fixture["cases"].end(); ++it) {
    fixture_order.push_back(it.key());
    INFO("case " << it.key());
    REQUIRE(cases.contains(it.key()));
    CHECK(cases[it.key()] == it.value());
  }
  for (auto it = cases.begin(); it != cases.end(); ++it) report_order.push_back(it.key());
  CHECK(report_order == fixture_order);
  CHECK(run.report["verdict"] == "pass");
  CHECK(run.report["expected"]["met"] == true);
  CHECK(run.report["execution_mode"] == "deterministic-virtual-clock-simulation");
}

TEST_CASE("the report's top-level contract", "[world][report]") {
  // Goal: pin the report's keys and their order. Method: list the top-level keys of the lab report.
  const auto run = admit::test::run_file("scenarios/lab_fifo.json", 7);
  std::vector<std::string> keys;
  for (auto it = run.report.begin(); it != run.report.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"format", "execution_mode", "scenario", "seed", "verdict", "expected",
                                         "invariants", "metrics", "probes", "cases", "diagnostics", "replay"});
  // The lab exercises promotion, refusals and a client that gives up; it never cancels a handler.
  const json& probes = run.report["probes"];
  CHECK(probes["hit"]["promoted"] == 1);
  CHECK(probes["hit"]["queue_full"] == 1);
  CHECK(probes["hit"]["client gave up before the answer"] == 1);
  CHECK(probes["never_hit"].size() >= 1);
  CHECK(run.report["format"] == "admitsim-report/1");
  CHECK(run.report["seed"] == 7);
  CHECK(run.report["scenario"]["sha256"].get<std::string>().size() == 64);
  CHECK(run.report["replay"] == "admitsim run scenarios/lab_fifo.json --seed 7");
  const json& m = run.report["metrics"];
  CHECK(m["requests"] == 7);
  CHECK(m["completed"] == 4);
  CHECK(m["refused"] == json({{"internal_error", 1}, {"queue_full", 1}, {"wait_timeout", 1}}));
  CHECK(m["client_timeouts"] == 1);
  CHECK(m["gate_inflight_max"] == 1);
  CHECK(m["simulated_ns"] == 900'000'000);
  CHECK_FALSE(m.contains("events"));  // a kernel figure: under diagnostics
  // Every event run is a post or a timer, and each of those drew a sequence number.
  const json& d = run.report["diagnostics"];
  CHECK(d.size() == 2);
  CHECK(d["events"].get<std::uint64_t>() >= 1);
  CHECK(d["sequence_numbers"].get<std::uint64_t>() >= d["events"].get<std::uint64_t>());
  for (const char* inv : {"gate_inflight_le_cap", "waiting_le_max", "portal_inflight_le_cap", "fifo_order",
                          "lease_released_once", "liveness"}) {
    INFO(inv);
    CHECK(run.report["invariants"][inv]["holds"] == true);
    CHECK(run.report["invariants"][inv]["checked"].get<std::uint64_t>() >= 1);
  }
}

TEST_CASE("a lease report's variants end with their own diagnostics", "[world][report]") {
  // Goal: diagnostics go where metrics go. Method: clock_skew's two variants, their keys and figures.
  const auto run = admit::test::run_file("scenarios/clock_skew.json", 11);
  CHECK_FALSE(run.report.contains("diagnostics"));
  REQUIRE(run.report["variants"].size() == 2);
  std::size_t i = 0;
  for (auto it = run.report["variants"].begin(); it != run.report["variants"].end(); ++it, ++i) {
    INFO(it.key());
    const json& v = it.value();
    std::vector<std::string> keys;
    for (auto k = v.begin(); k != v.end(); ++k) keys.push_back(k.key());
    REQUIRE(keys.size() >= 2);
    CHECK(keys.back() == "diagnostics");
    CHECK(keys[keys.size() - 2] == (v.contains("trace") ? "trace" : "probes"));
    CHECK_FALSE(v["metrics"].contains("events"));
    CHECK(v["diagnostics"]["events"] == run.runs[i].diagnostics.events);
    CHECK(v["diagnostics"]["sequence_numbers"] == run.runs[i].diagnostics.sequence_numbers);
    CHECK(run.runs[i].diagnostics.sequence_numbers >= run.runs[i].diagnostics.events);
  }
}

TEST_CASE("sha256 matches the standard test vectors", "[report]") {
  // Goal: the scenario digest is real SHA-256. Method: FIPS 180 examples, including a two-block tail.
  CHECK(admit::reports::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(admit::reports::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(admit::reports::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(admit::reports::sha256_hex(std::string(1000, 'a'))== "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}
