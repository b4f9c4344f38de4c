// fuzz_protocol_run: a fuzzed lease protocol file, run in a small fixed scenario under every lease fault.
//
// Goal: no protocol a user can write crashes, aborts or throws: it is refused at load with a one-line
// scenario_error, or each of its runs ends with a verdict (pass, violation, or inconclusive with a reason) and a
// report. Method: the input is the text of a protocol file (JSON, its scripts inline as "source"), put as it is
// into the `protocol` of a fixed scenario's lease gate (three workers, a limit of 2, twelve requests, and a fault
// schedule with every lease fault kind: crashes with and without a restart inside Redis pauses, partitions,
// restarts and failovers, clock steps, a worker pause and a client timeout burst); the loader reads the whole
// document, so a malformed protocol exercises its refusals at their paths under /gate/protocol. An accepted
// scenario runs with seed 1 (world::run_all) and is rendered as `admitsim run` renders it. A protocol whose
// client asks for a quorum gets three Redis nodes (a quorum over one node is refused, which says nothing new).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "gate/admit_assert.hpp"
#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/world/world.hpp"

namespace {

constexpr const char* target = "fuzz_protocol_run";

using admit::fuzz::finding;
using admit::fuzz::json;

// The scenario around the protocol: short (the faults fall within its first 8 s, the requests within 4 s) and
// bounded (200,000 events, 30 minutes of virtual time), so that each input runs in milliseconds.
constexpr std::string_view scenario_head = R"({"name": "fuzz_protocol", "seed": 1,
 "gate": {"kind": "lease", "limit": 2, "lease": "2s", )";
constexpr std::string_view scenario_tail = R"(},
 "fleet": {"workers": 3},
 "service": {"portal_cap": 2, "service_time": {"kind": "uniform", "min": "100ms", "max": "1500ms"}, "client_timeout": "3s"},
 "workload": {"arrivals": [{"kind": "constant", "count": 12, "every": "300ms"}]},
 "faults": {"schedule": [
  {"at": "200ms", "kind": "pause", "target": "redis", "duration": "1500ms"},
  {"at": "700ms", "kind": "crash", "target": "worker:1", "duration": "500ms"},
  {"at": "1s", "kind": "clock_step", "target": "worker:2", "step": "-700ms"},
  {"at": "1500ms", "kind": "partition", "between": ["worker:0", "redis"], "duration": "1200ms"},
  {"at": "1800ms", "kind": "crash", "target": "worker:0"},
  {"at": "2500ms", "kind": "redis_restart", "persistence": "none", "duration": "400ms"},
  {"at": "2600ms", "kind": "crash", "target": "worker:2", "duration": "300ms"},
  {"at": "3s", "kind": "pause", "target": "worker:1", "duration": "2500ms"},
  {"at": "3500ms", "kind": "client_timeout_burst", "target": "portal", "duration": "1s", "client_timeout": "200ms"},
  {"at": "4s", "kind": "redis_failover", "replication_lag": "500ms", "duration": "300ms"},
  {"at": "4100ms", "kind": "crash", "target": "worker:1", "duration": "1s"},
  {"at": "5s", "kind": "clock_step", "target": "redis", "step": "1500ms"},
  {"at": "6s", "kind": "partition", "target": "redis", "duration": "800ms"}
 ]},
 "checks": {"horizon": "30m", "max_events": 200000}})";

bool asks_for_quorum(std::string_view text) {
  const json p = json::parse(text, nullptr, false);
  if (!p.is_object()) return false;
  const auto client = p.find("client");
  if (client == p.end() || !client->is_object()) return false;
  const auto quorum = client->find("quorum");
  return quorum != client->end() && quorum->is_string() && *quorum != "single";
}

void one_input(const std::uint8_t* data, std::size_t size) {
  const std::string_view protocol(reinterpret_cast<const char*>(data), size);
  std::string text(scenario_head);
  if (asks_for_quorum(protocol)) text += R"("redis_nodes": 3, )";
  text += R"("protocol": )";
  text += protocol;
  text += scenario_tail;

  json doc;
  admit::scenario::scenario sc;
  try {
    sc = admit::scenario::load_scenario_text(text, doc);
  } catch (const admit::scenario::scenario_error& e) {
    admit::fuzz::check_error_message(target, e);
    return;
  }
  std::vector<admit::world::run_record> runs;
  try {
    runs = admit::world::run_all(sc, sc.seed);
  } catch (const std::invalid_argument& e) {
    // A combination no world runs; the CLI prints "FILE: " + what() and exits 2.
    const std::string_view what = e.what();
    if (what.empty() || what.front() != '/' || what.find('\n') != std::string_view::npos)
      finding(target, "the world refused the scenario without a one-line JSON path: " + std::string(what));
    return;
  }
  if (runs.empty()) finding(target, "run_all returned no run");
  for (const auto& r : runs) {
    const std::string_view verdict = r.verdict();
    if (verdict != "pass" && verdict != "violation" && verdict != "inconclusive")
      finding(target, "a run ended with the verdict " + std::string(verdict));
    if (r.inconclusive && (r.inconclusive->kind.empty() || r.inconclusive->detail.empty()))
      finding(target, "a run is inconclusive without a reason");
  }
  admit::reports::report_input in;
  in.sc = &sc;
  in.source = &doc;
  in.file = "fuzz_protocol.json";
  in.sha256 = admit::reports::sha256_hex(text);
  for (const auto& r : runs) in.runs.push_back(&r);
  if (admit::reports::render_report(admit::reports::build_report(in)).empty()) finding(target, "an empty report");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    one_input(data, size);
  } catch (const admit::assertion_failure& e) {
    finding(target, std::string("internal assertion: ") + e.what());
  } catch (const std::exception& e) {
    finding(target, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    finding(target, "unexpected exception of an unknown type");
  }
  return 0;
}
