// Goal: a FIFO gate whose core is a child process (docs/process-gate.md) is
// judged as admitsim's own core is: a child that behaves as fifo_gate gets
// admitsim's report, but for the keys that name the core; a child that
// crashes, hangs, writes garbage, answers out of protocol or reports an
// error ends the run inconclusive, naming the request and the child's last
// stderr lines, never a pass and never a violation; the same seed gives the
// same bytes.
//
// Method. tests/process/children/fifo_core.py is a FIFO core written to the
// line protocol alone (no asyncio), with flags that make it misbehave at a
// given request. The differential runs every FIFO scenario of the catalogue
// that an own core can run, at its seed and another, with admitsim's core and
// with the child. The child leaking a handed-over lease is caught (the
// property's guard: the differential can fail).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/fifo/process_messages.hpp"
#include "sim/world/world.hpp"
#include "world_test_support.hpp"

namespace {

using namespace admit;
using json = nlohmann::ordered_json;

// `doc` with every FIFO gate's core the child process `p` (a scenario's "process" object).
json with_core(json doc, const json& p) {
  const auto add = [&](json& g) {
    if (g.value("kind", "fifo") == "fifo") g["process"] = p;
  };
  if (doc.contains("gate")) add(doc["gate"]);
  if (doc.contains("gates"))
    for (json& g : doc["gates"]) add(g);
  return doc;
}

// `doc` with every FIFO gate's core the asyncio gate `file` (examples/python_gate) on the Python adapter.
json with_asyncio_gate(const json& doc, const std::string& file) {
  return with_core(doc, {{"command", {"python3", "../../gate/process/python/admitsim_fifo.py", file + ":Gate"}},
                         {"cwd", "examples/python_gate"}});
}

// `doc` with every FIFO gate's core in fifo_core.py, given `args`.
json with_process(const json& doc, const std::vector<std::string>& args = {}, const std::string& timeout = "") {
  json command = json::array({"python3", "fifo_core.py"});
  for (const std::string& a : args) command.push_back(a);
  json p = {{"command", command}, {"cwd", "tests/process/children"}};
  if (!timeout.empty()) p["message_timeout"] = timeout;
  return with_core(doc, p);
}

using ran = test::rendered;

ran run_doc_text(const json& doc, std::uint64_t seed) { return test::run_doc_rendered(doc, seed); }

// The report without what names the scenario's text or the core: what the run did.
json what_ran(json report) {
  report = test::without_diagnostics(std::move(report));
  report.erase("gate_core");
  report.erase("scenario");
  report.erase("replay");
  return report;
}

// The catalogue's FIFO scenarios an own core can run, but the benchmarks; `large`: only the two of
// thousands of requests (a child costs tens of microseconds a message), else all the others.
std::vector<std::string> fifo_catalogue(bool large = false) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("scenarios")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".json" || name.rfind("bench_", 0) == 0 || name == "schema.json") continue;
    if (large != (name == "fifo_poisson.json" || name == "march1_surge_fifo.json")) continue;
    json doc;
    const scenario::scenario sc = scenario::load_scenario_text(test::slurp(e.path().string()), doc,
                                                              {"scenarios", scenario::plain_file_reader()});
    if (world::own_gate_refusal(sc).empty()) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

json doc_of(const std::string& path) { return json::parse(test::slurp(path)); }

const world::run_record& only(const ran& r) {
  REQUIRE(r.runs.size() == 1);
  return r.runs.front();
}

void differential_fifo_core(const std::vector<std::string>& files);

}  // namespace

TEST_CASE("a child that behaves as fifo_gate gets admitsim's report", "[process_gate]") {
  const std::vector<std::string> files = fifo_catalogue();
  REQUIRE(files.size() >= 7);  // lab_fifo, the fifo_* scenarios, explore_handover_race, ...
  differential_fifo_core(files);
}

TEST_CASE("the differential on the catalogue's large FIFO scenarios", "[process_gate][.long]") {
  const std::vector<std::string> files = fifo_catalogue(true);
  REQUIRE(files.size() == 2);
  differential_fifo_core(files);
  for (const std::string& f : files) {
    const json doc = doc_of(f);
    const std::uint64_t seed = doc.value("seed", std::uint64_t{0});
    INFO(f << " seed " << seed << " (asyncio gate)");
    const json a = what_ran(run_doc_text(doc, seed).report);
    const json b = what_ran(run_doc_text(with_asyncio_gate(doc, "gate.py"), seed).report);
    if (a != b) FAIL(json::diff(json(a), json(b)).dump().substr(0, 600));
  }
}

namespace {
void differential_fifo_core(const std::vector<std::string>& files) {
  for (const std::string& f : files) {
    const json doc = doc_of(f);
    for (const std::uint64_t seed : {doc.value("seed", std::uint64_t{0}), std::uint64_t{7}}) {
      INFO(f << " seed " << seed);
      const ran ours = run_doc_text(doc, seed);
      const ran theirs = run_doc_text(with_process(doc), seed);
      REQUIRE(theirs.report.contains("gate_core"));
      CHECK(theirs.report["gate_core"]["name"] == "process:fifo_core.py");
      CHECK(theirs.report["gate_core"]["origin"] == "process");
      const json a = what_ran(ours.report), b = what_ran(theirs.report);
      if (a != b) FAIL(json::diff(json(a), json(b)).dump().substr(0, 600));
    }
  }
}
}  // namespace

TEST_CASE("an unmodified asyncio gate on the Python adapter gets admitsim's report", "[process_gate][python]") {
  // examples/python_gate/gate.py: the seed's asyncio FIFO gate (a deque of futures, wait_for over a
  // shield, the release-on-lost-race branch), run by gate/process/python on admitsim's clock.
  for (const std::string& f : fifo_catalogue()) {
    const json doc = doc_of(f);
    const std::uint64_t seed = doc.value("seed", std::uint64_t{0});
    INFO(f << " seed " << seed);
    const ran ours = run_doc_text(doc, seed);
    const ran theirs = run_doc_text(with_asyncio_gate(doc, "gate.py"), seed);
    CHECK(theirs.report["gate_core"]["name"] == "process:gate.py:Gate");
    const json a = what_ran(ours.report), b = what_ran(theirs.report);
    if (a != b) FAIL(json::diff(json(a), json(b)).dump().substr(0, 600));
  }
}

const char* const cancel_race_text = R"({
    "name": "process_cancel_race", "seed": 1,
    "gates": [{"name": "gate", "kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s"}],
    "service": {"service_time": "50ms", "portal_cap": 1},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "10ms", "cancel_at": "50ms"}]}
  })";

TEST_CASE("an asyncio gate that leaks the handed-over lease on a cancel is caught", "[process_gate][python]") {
  const json race = json::parse(cancel_race_text);
  CHECK(std::string(only(run_doc_text(with_asyncio_gate(race, "gate.py"), 1)).verdict()) == "pass");
  const ran leaky = run_doc_text(with_asyncio_gate(race, "leaky_gate.py"), 1);
  const world::run_record& r = only(leaky);
  CHECK(std::string(r.verdict()) == "violation");
  const auto& i = test::inv(r, "lease_released_once");
  REQUIRE(i.first.has_value());
  INFO(i.first->detail);
  CHECK(i.first->detail.find("process:leaky_gate.py:Gate broke its contract: cancel(ticket 2) answered removed, but it "
                             "had been promoted") != std::string::npos);
}

TEST_CASE("a child that leaks a handed-over lease is caught", "[process_gate]") {
  // b waits behind a; a's release at 50ms promotes b, and b's cancel lands at 50ms, before b resumes.
  const json race = json::parse(R"({
    "name": "process_cancel_race", "seed": 1,
    "gates": [{"name": "gate", "kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s"}],
    "service": {"service_time": "50ms", "portal_cap": 1},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "10ms", "cancel_at": "50ms"}]}
  })");
  const ran fine = run_doc_text(with_process(race), 1);
  CHECK(std::string(only(fine).verdict()) == "pass");
  const ran leaky = run_doc_text(with_process(race, {"--leak"}), 1);
  const world::run_record& r = only(leaky);
  CHECK(std::string(r.verdict()) == "violation");
  const auto& i = test::inv(r, "lease_released_once");
  CHECK_FALSE(i.holds);
  REQUIRE(i.first.has_value());
  INFO(i.first->detail);
  CHECK(i.first->detail.find("process:fifo_core.py broke its contract") != std::string::npos);
}

TEST_CASE("a child that fails ends the run inconclusive, naming the request and its stderr", "[process_gate]") {
  const json lab = doc_of("scenarios/lab_fifo.json");
  struct failing {
    std::vector<std::string> args;
    const char* kind;
    const char* says;
  };
  const failing cases[] = {
      {{"--crash-at", "4"}, "process_exited", "exited with status 3 before it answered"},
      {{"--hang-at", "4"}, "process_hung", "took more than 2 s to answer (killed)"},
      {{"--garbage-at", "4"}, "process_protocol", "answered `this is not json`"},
      {{"--wrong-at", "4"}, "process_protocol", "answered `{\"result\":\"maybe\"}`"},
      {{"--error-at", "4"}, "process_error", "with the error \"the gate raised ValueError at request 4\""},
  };
  for (const failing& c : cases) {
    INFO(c.kind << " " << c.args.front());
    // Only the hang waits out its limit; 2 s leaves a loaded machine's child room for the answers before it.
    const ran r = run_doc_text(with_process(lab, c.args, c.args.front() == "--hang-at" ? "2s" : ""), 1);
    const world::run_record& rec = only(r);
    CHECK(std::string(rec.verdict()) == "inconclusive");
    REQUIRE(rec.inconclusive.has_value());
    CHECK(rec.inconclusive->kind == c.kind);
    const std::string& d = rec.inconclusive->detail;
    CHECK(d.find(c.says) != std::string::npos);
    CHECK(d.find("{\"type\":\"acquire\",\"ticket\":3,\"now\":100000000}") != std::string::npos);
    CHECK(d.find("its last stderr lines: fifo_core.py: start") != std::string::npos);
    // Nothing after the failure is judged: no invariant is reported broken.
    for (const auto& i : rec.invariants) CHECK(i.holds);
  }
}

TEST_CASE("a program that cannot start is inconclusive, not a crash", "[process_gate]") {
  json doc = doc_of("scenarios/lab_fifo.json");
  for (json& g : doc["gates"]) g["process"] = {{"command", {"admitsim-no-such-program"}}};
  const ran r = run_doc_text(doc, 1);
  const world::run_record& rec = only(r);
  REQUIRE(rec.inconclusive.has_value());
  CHECK(rec.inconclusive->kind == "process_exited");
  CHECK(rec.inconclusive->detail.find("could not start `admitsim-no-such-program`") != std::string::npos);

  // Also in a gate no request uses: the failure is found at the end, never passed over.
  json idle = doc_of("scenarios/lab_fifo.json");
  idle["gates"].push_back({{"name", "idle"}, {"kind", "fifo"}, {"max_active", 1},
                           {"process", {{"command", {"admitsim-no-such-program"}}}}});
  const ran r2 = run_doc_text(idle, 1);
  REQUIRE(only(r2).inconclusive.has_value());
  CHECK(only(r2).inconclusive->kind == "process_exited");
  CHECK(only(r2).inconclusive->detail.rfind("idle: ", 0) == 0);
}

TEST_CASE("a process gate's report is the same bytes for the same seed", "[process_gate]") {
  const json doc = with_process(doc_of("scenarios/fifo_poisson.json"));
  const ran a = run_doc_text(doc, 11);
  const ran b = run_doc_text(doc, 11);
  CHECK(a.bytes == b.bytes);
  const ran c = run_doc_text(doc, 12);
  CHECK(what_ran(a.report) != what_ran(c.report));
}

TEST_CASE("a child whose stop fails is not reused, and the next run starts another", "[process_gate]") {
  const json doc = with_process(doc_of("scenarios/lab_fifo.json"), {"--stop-fails"});
  const ran a = run_doc_text(doc, 1);
  const ran b = run_doc_text(doc, 1);
  CHECK(std::string(only(a).verdict()) == "pass");
  CHECK(what_ran(a.report) == what_ran(b.report));
}

TEST_CASE("the protocol's messages: requests written, answers read strictly", "[process_gate][codec]") {
  namespace m = world::fifo_world::msg;
  // Requests: exactly the bytes docs/process-gate.md shows.
  fifo::config cfg;
  cfg.max_active = 1;
  cfg.max_waiting = 1;
  cfg.wait_deadline_ns = 150'000'000;
  CHECK(m::start{"delay", 7, cfg}.to_json().dump() ==
        R"({"type":"start","protocol":1,"gate":"delay","seed":7,"config":{"max_active":1,"max_waiting":1,"wait_deadline_ns":150000000},"now":0})");
  CHECK(m::ticket_call{m::ticket_call::kind::acquire, 3, 100}.to_json().dump() ==
        R"({"type":"acquire","ticket":3,"now":100})");
  CHECK(m::ticket_call{m::ticket_call::kind::cancel, 2, 5}.to_json().dump() == R"({"type":"cancel","ticket":2,"now":5})");
  CHECK(m::gate_call{m::gate_call::kind::release, 9}.to_json().dump() == R"({"type":"release","now":9})");
  CHECK(m::gate_call{m::gate_call::kind::stop, 9}.to_json().dump() == R"({"type":"stop","now":9})");

  // Answers that fit.
  CHECK(m::read_acquire(json::parse(R"({"result":"admitted"})"), 5).outcome == fifo::acquire_outcome::admitted);
  const fifo::acquire_result q = m::read_acquire(json::parse(R"({"result":"queued","deadline":20})"), 5);
  CHECK((q.outcome == fifo::acquire_outcome::queued && q.deadline_ns == 20));
  CHECK(m::read_acquire(json::parse(R"({"result":"queued","deadline":null})"), 5).deadline_ns == m::never_ns);
  const fifo::release_result rel = m::read_release(json::parse(R"({"ok":true,"promoted":4})"));
  CHECK((rel.ok && rel.promoted == fifo::ticket_id{4}));
  CHECK_FALSE(m::read_release(json::parse(R"({"ok":false,"promoted":null})")).ok);
  CHECK(m::read_claim(json::parse(R"({"claimed":true})")));
  CHECK(m::read_leave(json::parse(R"({"result":"handover_released","promoted":null})")).outcome ==
        fifo::leave_outcome::handover_released);
  CHECK(m::error_of(json::parse(R"({"error":"boom"})")) == std::optional<std::string>("boom"));
  CHECK_FALSE(m::error_of(json::parse(R"({"error":"boom","ok":true})")).has_value());

  // Answers that do not: each a codec_error naming the path and what was expected.
  const auto refused = [](auto read, const char* text, const char* path, const char* says) {
    INFO(text);
    try {
      read(json::parse(text));
      FAIL("accepted");
    } catch (const codec::codec_error& e) {
      CHECK(e.path == path);
      CHECK(std::string(e.what()).find(says) != std::string::npos);
    }
  };
  const auto acq = [](const json& a) { return m::read_acquire(a, 5); };
  refused(acq, R"({"result":"maybe"})", "/result", R"(expected "admitted", "queued" or "queue_full")");
  refused(acq, R"({"result":"queued","deadline":4})", "/deadline", "not before now (5)");
  refused(acq, R"({"result":"queued"})", "/deadline", "missing");
  refused(acq, R"({"result":"admitted","deadline":9})", "/deadline", "not queued");
  refused(acq, R"({"result":"admitted","extra":1})", "/extra", "unexpected key");
  refused(acq, R"({"result":"queued","deadline":-1})", "/deadline", "expected an integer");
  refused([](const json& a) { return m::read_release(a); }, R"({"ok":"yes","promoted":null})", "/ok", "");
  refused([](const json& a) { return m::read_release(a); }, R"({"ok":true,"promoted":0})", "/promoted", "got 0");
  refused([](const json& a) { return m::read_claim(a); }, R"([true])", "", "expected an object");
  refused([](const json& a) { return m::read_leave(a); }, R"({"result":"gone","promoted":null})", "/result", "");
  refused([](const json& a) {
    m::read_ok(a);
    return 0;
  }, R"({"ok":false})", "/ok", "expected true");
}
