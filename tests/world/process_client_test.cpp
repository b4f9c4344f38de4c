// Goal: a lease fleet whose client runs in child processes (docs/process-gate.md,
// "A fleet's client") is judged as admitsim's own client is: a child that
// runs the seed's design breaks where the built-in seed variant breaks, with
// the same invariants and the same causes, and holds where it holds; the
// world judges what the child did at the server, not what it says (a child
// that believes it holds permits it was refused is caught); a child that
// crashes, hangs, writes garbage, answers out of protocol, reports an error
// or names its permits its own way ends the run inconclusive, never a pass and
// never a violation; the same seed gives the same bytes.
//
// Method. Every catalogue lease scenario a process client can run (the seed
// variant, at most 64 workers, one node, no protocol) is run twice: as the
// built-in seed variant, and with each worker's client the example asyncio
// client (examples/python_lease/client.py on the Python adapter) or
// tests/process/children/lease_client.py (written to the protocol alone).
// What is compared: the verdict, the invariants broken and the causes named.
// Timings differ by design (the asyncio client loads its script with SCRIPT
// LOAD after a NOSCRIPT, the built-in one EVALs it), so reports are not
// compared byte for byte.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/lease/process_messages.hpp"
#include "sim/world/world.hpp"
#include "world_test_support.hpp"

namespace {

using namespace admit;
using json = nlohmann::ordered_json;

using ran = test::rendered;

ran run_doc(const json& doc, std::uint64_t seed) { return test::run_doc_rendered(doc, seed); }

const world::run_record& only(const ran& r) {
  REQUIRE(r.runs.size() == 1);
  return r.runs.front();
}

// A catalogue scenario as the seed variant alone: the other runs, renewal and protocols dropped, and its
// expectation the seed run's.
json as_seed(json doc) {
  json& g = doc["gate"];
  g.erase("variant");
  g.erase("renew_every");
  g.erase("protocol");
  if (doc.contains("expect") && doc["expect"].contains("variants")) {
    json& e = doc["expect"];
    const json seed = e["variants"].value("seed", json::object());
    e.erase("variants");
    for (const auto& [k, v] : seed.items()) e[k] = v;
  }
  return doc;
}

json with_client(json doc, const json& process) {
  doc["gate"]["process"] = process;
  return doc;
}

const json python_client = {
    {"command", {"python3", "../../gate/process/python/admitsim_lease.py", "client.py:make_gate"}},
    {"cwd", "examples/python_lease"}};

json raw_client(const std::vector<std::string>& args = {}, const std::string& timeout = "") {
  json command = json::array({"python3", "lease_client.py"});
  for (const std::string& a : args) command.push_back(a);
  json p = {{"command", command}, {"cwd", "tests/process/children"}};
  if (!timeout.empty()) p["message_timeout"] = timeout;
  return p;
}

// The catalogue's lease scenarios whose seed run a process client can stand in for.
std::vector<std::string> lease_catalogue() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("scenarios")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".json" || name == "schema.json") continue;
    const json doc = json::parse(test::slurp(e.path().string()));
    if (!doc.contains("gate") || doc["gate"].value("kind", "") != "lease") continue;
    const json& g = doc["gate"];
    const json v = g.value("variant", json("seed"));
    const bool has_seed = v.is_string() ? v == "seed" : std::find(v.begin(), v.end(), json("seed")) != v.end();
    const std::string mut = g.value("mutation", "none");
    if (!has_seed || g.value("redis_nodes", 1) != 1 || (mut != "none" && mut != "fail_open")) continue;
    if (doc.contains("fleet") && doc["fleet"].value("workers", 1) > scenario::lease_process_workers_max) continue;
    out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void cause_kinds(const json& o, std::set<std::string>& out) {
  if (o.is_object()) {
    for (const auto& [k, v] : o.items()) {
      if (k == "causes" && v.is_array())
        for (const json& c : v)
          if (c.is_object() && c.contains("kind") && c["kind"].is_string()) out.insert(c["kind"].get<std::string>());
      cause_kinds(v, out);
    }
  } else if (o.is_array()) {
    for (const json& v : o) cause_kinds(v, out);
  }
}

// What a judge says of the seed run: its verdict, the invariants it found broken, the causes it named.
json judged(const json& report) {
  const json& run = report["variants"]["seed"];
  json broken = json::array();
  for (const auto& [name, inv] : run["invariants"].items())
    if (!inv.value("holds", true)) broken.push_back(name);
  std::set<std::string> causes;
  cause_kinds(run["invariants"], causes);
  return {{"verdict", run["verdict"]}, {"broken", broken}, {"causes", causes}};
}

void differential(const std::vector<std::string>& files, const json& client) {
  for (const std::string& f : files) {
    const json doc = as_seed(json::parse(test::slurp(f)));
    const std::uint64_t seed = doc.value("seed", std::uint64_t{0});
    INFO(f << " seed " << seed);
    const ran ours = run_doc(doc, seed);
    const ran theirs = run_doc(with_client(doc, client), seed);
    REQUIRE(theirs.report.contains("gate_core"));
    CHECK(theirs.report["gate_core"]["origin"] == "process");
    CHECK(judged(ours.report) == judged(theirs.report));
  }
}

const std::vector<std::string> quick = {"scenarios/clock_skew.json", "scenarios/crashed_holder.json",
                                        "scenarios/redis_restart.json", "scenarios/paused_holder.json",
                                        "scenarios/redis_partition.json"};

}  // namespace

TEST_CASE("the example asyncio client is judged as the built-in seed client", "[process_client][python]") {
  // Breaks and holds alike: caller clock skew, crashed holders (the child killed and restarted), a restart
  // that forgets permits, a paused holder outliving its lease, a partition.
  differential(quick, python_client);
}

TEST_CASE("a child written to the protocol alone is judged as the built-in seed client", "[process_client]") {
  differential({"scenarios/clock_skew.json", "scenarios/crashed_holder.json"}, raw_client());
}

TEST_CASE("the differential on every catalogue lease scenario a process client runs", "[process_client][.long]") {
  const std::vector<std::string> files = lease_catalogue();
  REQUIRE(files.size() >= 20);
  differential(files, python_client);
}

TEST_CASE("the caller's clock is found in a call whatever form it takes", "[process_client]") {
  // Worker 0's clock runs 20s ahead. Passed as ms, as seconds or as an expiry (now + lease), the now
  // it sends reaps the others' live permits, and the cause names its clock; a script that reads the
  // server's TIME instead holds, as the server_time variant does.
  const json doc = as_seed(json::parse(test::slurp("scenarios/clock_skew.json")));
  for (const char* form : {"ms", "seconds", "expiry"}) {
    INFO(form);
    const ran r = run_doc(with_client(doc, raw_client({"--now-as", form})), 11);
    CHECK(std::string(only(r).verdict()) == "violation");
    std::set<std::string> causes;
    cause_kinds(r.report["variants"]["seed"]["invariants"], causes);
    CHECK(causes == std::set<std::string>{"caller_clock_skew"});
  }
  CHECK(std::string(only(run_doc(with_client(doc, raw_client({"--now-as", "none"})), 11)).verdict()) == "pass");
}

TEST_CASE("the world judges what the child did, not what it says", "[process_client]") {
  // A client that reads every acquire reply as a grant: the server refused it, so the workers at work
  // outnumber the permits and the portal sees more connections than its cap. Without the bug it holds.
  const json doc = as_seed(json::parse(test::slurp("scenarios/crashed_holder.json")));
  CHECK(std::string(only(run_doc(with_client(doc, raw_client()), 13)).verdict()) == "pass");
  const ran liar = run_doc(with_client(doc, raw_client({"--grant-always"})), 13);
  CHECK(std::string(only(liar).verdict()) == "violation");
  CHECK_FALSE(test::portal_held(only(liar)));
}

TEST_CASE("a child that fails ends the run inconclusive, naming the request and its stderr", "[process_client]") {
  const json doc = as_seed(json::parse(test::slurp("scenarios/crashed_holder.json")));
  struct failing {
    std::vector<std::string> args;
    const char* kind;
    const char* says;
  };
  const failing cases[] = {
      {{"--crash-at", "5"}, "process_exited", "exited with status 3 before it answered"},
      {{"--hang-at", "5"}, "process_hung", "to answer (killed)"},
      {{"--garbage-at", "5"}, "process_protocol", "answered `this is not json`"},
      {{"--wrong-at", "2"}, "process_protocol", R"(/done: expected one of "granted", "acquire_timeout", "unreachable")"},
      {{"--past-at", "5"}, "process_protocol", "/wait_until: expected an instant not before now"},
      {{"--error-at", "5"}, "process_error", "failing at request 5 as asked"},
      {{"--grant-no-call"}, "process_protocol", "without a call to Redis"},
  };
  for (const failing& c : cases) {
    INFO(c.kind << " " << c.args.front());
    // Only the hang waits out its limit; 2 s leaves a loaded machine's child room for the answers before it.
    const ran r = run_doc(with_client(doc, raw_client(c.args, c.args.front() == "--hang-at" ? "2s" : "")), 13);
    const world::run_record& rec = only(r);
    CHECK(std::string(rec.verdict()) == "inconclusive");
    REQUIRE(rec.inconclusive.has_value());
    CHECK(rec.inconclusive->kind == c.kind);
    const std::string& d = rec.inconclusive->detail;
    CHECK(d.find(c.says) != std::string::npos);
    // Nothing after the failure is judged: no invariant is reported broken.
    for (const auto& i : rec.invariants) CHECK(i.holds);
  }
}

TEST_CASE("a worker's crash kills its child, and its restart starts a new one", "[process_client]") {
  // crashed_holder: worker 2 crashes at 7s and comes back 30s later. Its first child ran generation 0; the
  // child of its restart is started with generation 1 (this one then exits, as asked).
  const json doc = as_seed(json::parse(test::slurp("scenarios/crashed_holder.json")));
  const ran r = run_doc(with_client(doc, raw_client({"--exit-restarted"})), 13);
  const world::run_record& rec = only(r);
  REQUIRE(rec.inconclusive.has_value());
  CHECK(rec.inconclusive->kind == "process_exited");
  CHECK(rec.inconclusive->detail.find("worker 2 restarted (generation 1)") != std::string::npos);
  CHECK(rec.inconclusive->detail.find("\"generation\":1") != std::string::npos);
}

TEST_CASE("a child that names its permits its own way is inconclusive", "[process_client]") {
  const json doc = as_seed(json::parse(test::slurp("scenarios/crashed_holder.json")));
  const ran r = run_doc(with_client(doc, raw_client({"--own-token"})), 13);
  const world::run_record& rec = only(r);
  REQUIRE(rec.inconclusive.has_value());
  CHECK(rec.inconclusive->kind == "protocol_inconsistent");
  CHECK(rec.inconclusive->detail.find("added the member \"mine-1\"") != std::string::npos);
}

TEST_CASE("a client program that cannot start is inconclusive, not a crash", "[process_client]") {
  const json doc = as_seed(json::parse(test::slurp("scenarios/crashed_holder.json")));
  const ran r = run_doc(with_client(doc, {{"command", {"admitsim-no-such-program"}}}), 13);
  REQUIRE(only(r).inconclusive.has_value());
  CHECK(only(r).inconclusive->kind == "process_exited");
}

namespace {

// clock_skew's seed run with worker 5's clock stepped 3s back at 2s and 4s ahead at 3.1s (each a
// promise's end), and worker 2's clock drifting (no promise at all).
json stepped_clocks() {
  json doc = as_seed(json::parse(test::slurp("scenarios/clock_skew.json")));
  doc["fleet"]["clocks"].push_back({{"worker", 2}, {"drift_ppm", 2000}});
  doc["faults"]["schedule"] = json::array(
      {json{{"at", "2s"}, {"kind", "clock_step"}, {"target", "worker:5"}, {"step", "-3s"}},
       json{{"at", "3100ms"}, {"kind", "clock_step"}, {"target", "worker:5"}, {"step", "+4s"}}});
  return doc;
}

std::uint64_t diag(const ran& r, const char* key) { return r.report["variants"]["seed"]["diagnostics"][key].get<std::uint64_t>(); }

}  // namespace

TEST_CASE("a child that runs ahead where the world promises gives the same run with fewer messages", "[process_client]") {
  // Goal: answering a wait's wake-up ahead (the protocol's "ahead") changes nothing the world judges,
  // only the messages it takes. Method: the raw child with and without --ahead on scenarios with a
  // crash and restart, a skewed clock, clock steps and a drifting clock: every byte of the report but
  // the diagnostics is the same, and the wake-ups answered ahead are messages saved.
  for (const json& doc : {as_seed(json::parse(test::slurp("scenarios/crashed_holder.json"))), stepped_clocks()}) {
    const std::uint64_t seed = doc.value("seed", std::uint64_t{0});
    INFO(doc["name"] << " seed " << seed);
    const ran plain = run_doc(with_client(doc, raw_client()), seed);
    const ran ahead = run_doc(with_client(doc, raw_client({"--ahead"})), seed);
    // The scenario differs by the child's flag; every run's every byte but its diagnostics is the same.
    CHECK(test::without_diagnostics(plain.report)["variants"] == test::without_diagnostics(ahead.report)["variants"]);
    CHECK(diag(plain, "process_wakes_ahead") == 0);
    CHECK(diag(ahead, "process_wakes_ahead") > 0);
    CHECK(diag(ahead, "process_messages") + diag(ahead, "process_wakes_ahead") == diag(plain, "process_messages"));
  }
}

TEST_CASE("a step ahead the world did not offer is out of protocol", "[process_client]") {
  // A child that answers every wait with a step ahead: where the worker's clock drifts nothing was offered,
  // and where a clock step is due the offer ends before it.
  json drifting = as_seed(json::parse(test::slurp("scenarios/crashed_holder.json")));
  drifting["fleet"]["clocks"] = json::array({json{{"worker", 2}, {"drift_ppm", 2000}}});
  const ran d = run_doc(with_client(drifting, raw_client({"--then-always"})), 13);
  REQUIRE(only(d).inconclusive.has_value());
  CHECK(only(d).inconclusive->kind == "process_protocol");
  CHECK(only(d).inconclusive->detail.find("/then: unexpected key; a step runs ahead only where the request offered it") !=
        std::string::npos);
  json stepped = stepped_clocks();
  stepped["fleet"]["clocks"].erase(1);  // worker 2 keeps time: only the steps end an offer
  const ran s = run_doc(with_client(stepped, raw_client({"--then-always"})), 11);
  REQUIRE(only(s).inconclusive.has_value());
  CHECK(only(s).inconclusive->kind == "process_protocol");
  CHECK(only(s).inconclusive->detail.find("/wait_until: expected an instant not after the offer's until (1999999999)") !=
        std::string::npos);
}

TEST_CASE("a process client's report is the same bytes for the same seed", "[process_client][python]") {
  const json doc = with_client(as_seed(json::parse(test::slurp("scenarios/clock_skew.json"))), python_client);
  const ran a = run_doc(doc, 11);
  const ran b = run_doc(doc, 11);
  CHECK(a.bytes == b.bytes);
  const ran c = run_doc(doc, 12);
  CHECK(test::without_diagnostics(a.report)["variants"] != test::without_diagnostics(c.report)["variants"]);
}

TEST_CASE("the fleet-client protocol's messages: requests written, steps read strictly", "[process_client][codec]") {
  namespace m = world::lease::msg;
  using K = gate::client_core::op_kind;
  CHECK(m::op_start{K::acquire, 3, "w1-2", 100, 1709251200000}.to_json().dump() ==
        R"({"type":"acquire","op":3,"token":"w1-2","now":100,"wall_ms":1709251200000})");
  const redis::reply r = redis::reply::array({redis::reply::from_integer(1), redis::reply::bulk(std::string("\xff\x01", 2)),
                                              redis::reply::nil(), redis::reply::status("OK"),
                                              redis::reply::error("NOSCRIPT No matching script")});
  CHECK(m::op_reply{3, false, &r, 5, 6}.to_json().dump() ==
        R"({"type":"reply","op":3,"now":5,"wall_ms":6,"reply":{"array":[{"int":1},{"bulk":{"hex":"ff01"}},{"nil":true},{"status":"OK"},{"error":"NOSCRIPT No matching script"}]}})");
  CHECK(m::op_reply{3, true, nullptr, 5, 6}.to_json().dump() == R"({"type":"lost","op":3,"now":5,"wall_ms":6})");
  CHECK(m::op_woke{3, 7, 8}.to_json().dump() == R"({"type":"woke","op":3,"now":7,"wall_ms":8})");
  const m::ahead offer{90, 1'000'000'000};
  CHECK(offer.wall_ms_at(1'999'999) == 1001);
  CHECK(m::op_woke{3, 7, 8, &offer}.to_json().dump() ==
        R"({"type":"woke","op":3,"now":7,"wall_ms":8,"ahead":{"until":90,"wall_base":1000000000}})");
  CHECK(m::op_reply{3, true, nullptr, 5, 6, &offer}.to_json().dump() ==
        R"({"type":"lost","op":3,"now":5,"wall_ms":6,"ahead":{"until":90,"wall_base":1000000000}})");
  const m::ahead endless{m::ahead::last_until(1'000'000'000), 1'000'000'000};
  CHECK(m::op_woke{3, 7, 8, &endless}.to_json().dump() ==
        R"({"type":"woke","op":3,"now":7,"wall_ms":8,"ahead":{"wall_base":1000000000}})");
  const m::step w = m::read_step(json::parse(R"({"wait_until":9,"then":{"command":["GET","k"],"timeout_at":12}})"),
                                 K::acquire, 5, &offer);
  REQUIRE(w.then.size() == 1);
  CHECK((w.k == m::step::kind::wait && w.until_ns == 9 && w.then[0].k == m::step::kind::command));
  CHECK(w.then[0].timeout_at_ns == std::optional<std::int64_t>(12));
  CHECK(m::read_step(json::parse(R"({"wait_until":90,"then":{"done":"acquire_timeout"}})"), K::acquire, 5, &offer)
            .then.at(0).out == m::step::outcome::acquire_timeout);

  const m::step c = m::read_step(json::parse(R"({"command":["ZREM","k",{"hex":"ff00"}],"timeout_at":9})"), K::acquire, 5);
  CHECK((c.k == m::step::kind::command && c.argv == std::vector<std::string>{"ZREM", "k", std::string("\xff\x00", 2)}));
  CHECK(c.timeout_at_ns == std::optional<std::int64_t>(9));
  CHECK(m::read_step(json::parse(R"({"wait_until":5})"), K::acquire, 5).until_ns == 5);
  const m::step g = m::read_step(json::parse(R"({"done":"granted","value":7})"), K::acquire, 5);
  CHECK((g.k == m::step::kind::done && g.out == m::step::outcome::granted && g.value == 7));
  CHECK(m::read_step(json::parse(R"({"done":"lost"})"), K::release, 5).out == m::step::outcome::lost);

  const auto refused = [](const char* text, K kind, const char* path, const char* says) {
    INFO(text);
    try {
      (void)m::read_step(json::parse(text), kind, 5);
      FAIL("accepted");
    } catch (const codec::codec_error& e) {
      CHECK(e.path == path);
      CHECK(std::string(e.what()).find(says) != std::string::npos);
    }
  };
  refused(R"({"command":[]})", K::acquire, "/command", "at least the command's name");
  refused(R"({"command":[""]})", K::acquire, "/command/0", "a command name");
  refused(R"({"command":[1]})", K::acquire, "/command/0", "a string or {\"hex\"");
  refused(R"({"command":[{"hex":"f"}]})", K::acquire, "/command/0/hex", "even number");
  refused(R"({"command":["GET"],"timeout_at":4})", K::acquire, "/timeout_at", "not before now (5)");
  refused(R"({"wait_until":4})", K::acquire, "/wait_until", "not before now (5)");
  refused(R"({"done":"released"})", K::acquire, "/done", "the ends of acquire");
  refused(R"({"done":"granted"})", K::release, "/done", "the ends of release");
  refused(R"({"done":"granted","value":0})", K::acquire, "/value", "at least 1");
  refused(R"({"done":"released","value":1})", K::release, "/value", "only with granted");
  refused(R"({"done":"released","extra":1})", K::release, "/extra", "unexpected key");
  refused(R"({"ok":true})", K::acquire, "", "command, wait_until or done");
  refused(R"({"wait_until":9,"then":{"done":"granted"}})", K::acquire, "/then", "only where the request offered it");
  const auto refused_ahead = [&offer](const char* text, const char* path, const char* says) {
    INFO(text);
    try {
      (void)m::read_step(json::parse(text), K::acquire, 5, &offer);
      FAIL("accepted");
    } catch (const codec::codec_error& e) {
      CHECK(e.path == path);
      CHECK(std::string(e.what()).find(says) != std::string::npos);
    }
  };
  refused_ahead(R"({"wait_until":91,"then":{"done":"granted"}})", "/wait_until", "not after the offer's until (90)");
  refused_ahead(R"({"wait_until":9,"then":{"wait_until":8}})", "/then/wait_until", "not before now (9)");
  refused_ahead(R"({"wait_until":9,"then":{"command":["GET"],"timeout_at":8}})", "/then/timeout_at", "not before now (9)");
  refused_ahead(R"({"wait_until":9,"then":{"wait_until":10,"then":{"done":"granted"}}})", "/then/then", "one wake-up at most");
  refused_ahead(R"({"wait_until":9,"then":{"done":"released"}})", "/then/done", "the ends of acquire");
  refused_ahead(R"({"wait_until":9,"then":7})", "/then", "expected an object");
  refused(R"([1])", K::acquire, "", "expected an object");
}
