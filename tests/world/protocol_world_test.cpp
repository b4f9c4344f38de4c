// Lease protocols in the world: the built-in protocol files run through the
// embedded Lua exactly as their C++ bodies do, a user's script error is an
// inconclusive run that names the script, the monitors judge a user's
// protocol as they judge the built-ins (a protocol that forgets to reap is
// caught), and each client policy field does what it says (on a lost
// renewal, a client timeout, a wake-up, a give-up).
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sim/check/trace_sink.hpp"
#include "world_test_support.hpp"

namespace {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

// Each run's part of the report, without what only the kernel or the file name decides.
json runs_of(const admit::test::rendered& r) {
  json report = admit::test::without_diagnostics(r.report);
  if (report.contains("variants")) return report["variants"];
  json one = json::object();
  one[r.rec.variant] = report;
  return one;
}

admit::test::rendered render_doc(const json& doc, std::uint64_t seed, const admit::world::lease_run_options& opts = {}) {
  const std::string text = doc.dump(2);
  json parsed;
  const admit::scenario::scenario sc =
      admit::scenario::load_scenario_text(text, parsed, {".", admit::scenario::plain_file_reader()});
  admit::test::rendered r;
  r.runs = admit::world::run_all(sc, seed, opts);
  r.rec = r.runs.front();
  admit::reports::report_input in;
  in.sc = &sc;
  in.source = &parsed;
  in.file = "inline.json";
  in.sha256 = admit::reports::sha256_hex(text);
  for (const auto& run : r.runs) in.runs.push_back(&run);
  r.report = admit::reports::build_report(in);
  return r;
}

// The scenario with each of its gate's variants replaced by the built-in protocol file of that name.
json through_protocol_files(json doc) {
  json& g = doc["gate"];
  json names = g.contains("variant") ? g["variant"] : json("seed");
  if (!names.is_array()) names = json::array({names});
  json paths = json::array();
  for (const auto& n : names) paths.push_back("gate/redis/protocols/" + n.get<std::string>() + ".json");
  g.erase("variant");
  g["protocol"] = paths;
  return doc;
}

std::vector<std::string> lease_catalogue() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("scenarios")) {
    if (e.path().extension() != ".json" || e.path().filename() == "schema.json") continue;
    const json doc = json::parse(admit::test::slurp(e.path().string()));
    if (!doc.contains("gate") || doc["gate"].value("kind", "") != "lease" || doc["gate"].contains("protocol")) continue;
    const std::string mut = doc["gate"].value("mutation", "none");
    if (mut == "check_then_add" || mut == "no_reaping") continue;  // they replace a built-in acquire
    out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

const char* const sparse_lease = R"({"name": "user", "seed": 3,
  "gate": {"kind": "lease", "limit": 2, "lease": "2s"},
  "fleet": {"workers": 3},
  "service": {"service_time": "500ms"},
  "workload": {"arrivals": [{"kind": "constant", "count": 12, "every": "300ms"}]}})";

// A protocol object with inline scripts: `acquire` (and the plain ZREM release).
json user_protocol(const std::string& name, const std::string& acquire_lua) {
  json p;
  p["format"] = "admitsim-protocol/1";
  p["name"] = name;
  p["scripts"]["acquire"]["source"] = acquire_lua;
  p["scripts"]["acquire"]["origin"] = name + "_acquire.lua";
  p["acquire"] = json{{"script", "acquire"}, {"keys", {"{key}"}}, {"args", {"{lease_ms}", "{limit}", "{token}"}}};
  p["release"] = json{{"command", {"ZREM", "{key}", "{token}"}}};
  return p;
}

}  // namespace

TEST_CASE("a built-in variant runs its protocol file, in the engine's VM as with its native twins", "[world][protocol]") {
  // Goal: a variant is its protocol file, and the twins are the Lua. Method: every lease scenario of the
  // catalogue, with its variants and with the same-named protocol files named by path, each through the
  // engine's VM (native twins off); the runs' reports must be equal but for the kernel's diagnostics, and
  // equal again with the twins on (the default).
  const auto files = lease_catalogue();
  REQUIRE(files.size() >= 10);
  int compared = 0;
  for (const auto& f : files) {
    INFO(f);
    const json doc = json::parse(admit::test::slurp(f));
    const std::uint64_t seed = doc.value("seed", std::uint64_t{1});
    admit::world::lease_run_options in_vm;
    in_vm.native_twins = false;
    const auto variants = render_doc(doc, seed, in_vm);
    const auto files_by_path = render_doc(through_protocol_files(doc), seed, in_vm);
    CHECK(runs_of(files_by_path) == runs_of(variants));
    CHECK(files_by_path.report["verdict"] == variants.report["verdict"]);
    CHECK(runs_of(render_doc(doc, seed)) == runs_of(variants));
    ++compared;
  }
  CHECK(compared == static_cast<int>(files.size()));
}

TEST_CASE("a user's script error ends the run inconclusive, naming the script, its line and the call", "[world][protocol]") {
  // Goal: a broken script is never a pass. Method: an acquire whose ZADD gets a score that is not a number;
  // the run stops at the first call, and the record names the script, the line, the command and the token.
  json doc = json::parse(sparse_lease);
  doc["gate"]["protocol"] = user_protocol("typo", "local n = 1\nreturn redis.call('ZADD', KEYS[1], 'now', ARGV[3])\n");
  const auto r = render_doc(doc, 3);
  REQUIRE(r.rec.inconclusive.has_value());
  CHECK(r.rec.inconclusive->kind == "script_error");
  REQUIRE(r.rec.inconclusive->script.has_value());
  const auto& f = *r.rec.inconclusive->script;
  CHECK(f.operation == "acquire");
  CHECK(f.script == "acquire");
  CHECK(f.origin == "typo_acquire.lua");
  CHECK(f.line == 2);
  CHECK(f.message.find("not a valid float") != std::string::npos);
  CHECK(f.token == "w0-1");
  CHECK(std::string(r.rec.verdict()) == "inconclusive");
  CHECK(r.report["verdict"] == "inconclusive");
  CHECK(runs_of(r)["typo"]["inconclusive"]["script"]["line"] == 2);
  CHECK(runs_of(r)["typo"]["inconclusive"]["script"]["origin"] == "typo_acquire.lua");
  CHECK_FALSE(admit::reports::as_expected(admit::scenario::load_scenario_text(doc.dump()), r.rec));  // expects a pass
}

TEST_CASE("a script that loops is stopped at the step limit and the run is inconclusive", "[world][protocol]") {
  // Goal: a user's script cannot hang the simulator. Method: an acquire that never returns, under a step
  // limit of 100,000; the run ends inconclusive with the step limit named.
  json doc = json::parse(sparse_lease);
  doc["gate"]["protocol"] = user_protocol("spin", "while true do end\n");
  admit::world::lease_run_options opts;
  opts.script_steps_max = 100'000;
  const auto r = render_doc(doc, 3, opts);
  REQUIRE(r.rec.inconclusive.has_value());
  REQUIRE(r.rec.inconclusive->script.has_value());
  CHECK(r.rec.inconclusive->script->step_limit);
  CHECK(r.rec.inconclusive->detail.find("step limit") != std::string::npos);
}

TEST_CASE("a user's protocol that never reaps is caught by the same monitors as the built-ins", "[world][protocol]") {
  // Goal: the checks judge the user's Lua, not ours. Method: an acquire that grants while ZCARD < limit but never
  // removes expired permits, and a crashed holder; the permit it leaves outlives its lease (expired_leases_reaped)
  // and, once the gate is full of dead permits, nobody is admitted again. The honest version passes.
  const std::string leaky =
      "local gate, lease_ms, limit, token = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]\n"
      "local t = redis.call('TIME')\n"
      "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
      "if redis.call('ZCARD', gate) >= limit then return 0 end\n"
      "redis.call('ZADD', gate, now, token)\n"
      "return 1\n";
  const std::string reaping =
      "local gate, lease_ms, limit, token = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]\n"
      "local t = redis.call('TIME')\n"
      "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
      "redis.call('ZREMRANGEBYSCORE', gate, '-inf', now - lease_ms)\n"
      "if redis.call('ZCARD', gate) >= limit then return 0 end\n"
      "redis.call('ZADD', gate, now, token)\n"
      "return 1\n";
  json doc = json::parse(sparse_lease);
  doc["faults"]["schedule"] = json::array({json{{"at", "100ms"}, {"kind", "crash"}, {"target", "worker:0"}, {"duration", "1s"}}});
  doc["gate"]["protocol"] = json::array({user_protocol("leaky", leaky), user_protocol("reaping", reaping)});
  const auto r = render_doc(doc, 3);
  REQUIRE(r.runs.size() == 2);
  CHECK(r.runs[0].variant == "leaky");
  CHECK(r.runs[0].any_violation());
  bool reaped_broken = false;
  for (const auto& inv : r.runs[0].invariants)
    if (inv.name == "expired_leases_reaped") reaped_broken = !inv.holds;
  CHECK(reaped_broken);
  CHECK(r.runs[1].variant == "reaping");
  CHECK_FALSE(r.runs[1].any_violation());
  CHECK_FALSE(r.runs[1].inconclusive.has_value());
}

namespace {

// A built-in protocol file as an inline object (its Lua files read in), to change its client policy.
json builtin_inline(const std::string& name) {
  json p = json::parse(admit::test::slurp("gate/redis/protocols/" + name + ".json"));
  for (auto& [script, spec] : p["scripts"].items()) {
    const std::string file = spec["file"].get<std::string>();
    spec = json{{"source", admit::test::slurp("gate/redis/protocols/" + file)}, {"origin", file}};
  }
  return p;
}

// One worker whose process pauses for 3s while it works a 5s request under a 2s lease renewed every 600ms:
// its next renewal finds the permit reaped, with its request still at the portal.
json paused_renewer(const std::string& on_renewal_lost) {
  json doc = json::parse(R"({"name": "paused_renewer", "seed": 1,
    "gate": {"kind": "lease", "limit": 1, "lease": "2s", "renew_every": "600ms"},
    "fleet": {"workers": 1},
    "service": {"portal_cap": 1, "service_time": "5s", "client_timeout": "20s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 3, "every": "1s"}]},
    "faults": {"schedule": [{"at": "500ms", "kind": "pause", "target": "worker:0", "duration": "3s"}]}})");
  json p = builtin_inline("renewal");
  p["client"]["on_renewal_lost"] = on_renewal_lost;
  doc["gate"]["protocol"] = p;
  return doc;
}

const admit::world::invariant_result& invariant(const admit::world::run_record& r, const std::string& name) {
  for (const auto& i : r.invariants)
    if (i.name == name) return i;
  FAIL("no invariant " << name);
  return r.invariants.front();
}

}  // namespace

TEST_CASE("what a lost renewal does is the protocol's: keep working, stop new work, or abort the request", "[world][protocol]") {
  // Goal: client.on_renewal_lost is honoured. Method: the paused renewer under each policy. Keeping on finishes
  // all three requests; stopping new work leaves the two queued ones unended (liveness breaks); aborting gives up
  // the request at the portal, whose connection stays open, so the next grant opens a second one (the cap breaks).
  const auto keep = render_doc(paused_renewer("keep_working"), 1);
  CHECK(keep.rec.lease->renewals_lost == 1);
  CHECK(keep.rec.metrics.completed == 3);
  CHECK_FALSE(keep.rec.any_violation());

  const auto stop = render_doc(paused_renewer("stop_new_work"), 1);
  CHECK(stop.rec.lease->renewals_lost == 1);
  CHECK(stop.rec.metrics.completed == 1);
  CHECK_FALSE(invariant(stop.rec, "liveness").holds);
  REQUIRE(invariant(stop.rec, "liveness").first.has_value());
  CHECK(invariant(stop.rec, "liveness").first->detail.find("2 work items never ended") != std::string::npos);

  const auto abort = render_doc(paused_renewer("abort_request"), 1);
  CHECK(abort.rec.lease->renewals_lost == 1);
  CHECK(abort.rec.metrics.refused.at("aborted") == 1);
  CHECK_FALSE(invariant(abort.rec, "portal_inflight_le_cap").holds);
}

TEST_CASE("a protocol that holds the permit until the connection ends survives the client-timeout overshoot", "[world][protocol]") {
  // Goal: client.on_client_timeout is honoured. Method: the catalogue's client_timeout_overshoot (3s read timeout,
  // requests up to 10s) through the server_time protocol: releasing at the timeout breaks the portal's cap, as the
  // catalogue says of every variant; holding the permit until the connection closes keeps it.
  json doc = json::parse(admit::test::slurp("scenarios/client_timeout_overshoot.json"));
  doc["gate"].erase("variant");
  doc.erase("expect");
  json p = builtin_inline("server_time");
  doc["gate"]["protocol"] = p;
  const auto release = render_doc(doc, 17);
  CHECK_FALSE(invariant(release.rec, "portal_inflight_le_cap").holds);
  p["client"]["on_client_timeout"] = "hold_to_end";
  doc["gate"]["protocol"] = p;
  const auto hold = render_doc(doc, 17);
  CHECK(hold.rec.metrics.client_timeouts > 0);
  CHECK_FALSE(hold.rec.any_violation());
  CHECK_FALSE(hold.rec.inconclusive.has_value());
}

TEST_CASE("a waiter listening on its protocol's channel is woken by a release's PUBLISH", "[world][protocol]") {
  // Goal: PUBLISH reaches the world's subscribed clients. Method: one permit, two workers, requests of 1s, a fixed
  // retry of 5s; the release script publishes on {key}:free. Without wake_on the second request waits for its
  // next attempt, 5s after its first; with it, it is granted one round trip after the release.
  json p = builtin_inline("server_time");
  p["scripts"]["release"] = json{{"source", "redis.call('PUBLISH', KEYS[1] .. ':free', ARGV[1])\n"
                                            "return redis.call('ZREM', KEYS[1], ARGV[1])\n"},
                                 {"origin", "publishing_release.lua"}};
  p["client"]["retry"] = json{{"kind", "fixed"}, {"delay", "5s"}};
  json doc = json::parse(R"({"name": "wake", "seed": 1,
    "gate": {"kind": "lease", "limit": 1, "lease": "15s"},
    "fleet": {"workers": 2},
    "service": {"portal_cap": 1, "service_time": "1s"},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "10ms"}]}})");
  doc["gate"]["protocol"] = p;
  const auto polling = render_doc(doc, 1);
  p["client"]["wake_on"] = "{key}:free";
  doc["gate"]["protocol"] = p;
  const auto woken = render_doc(doc, 1);
  CHECK_FALSE(polling.rec.any_violation());
  CHECK_FALSE(woken.rec.any_violation());
  CHECK(polling.rec.metrics.completed == 2);
  CHECK(woken.rec.metrics.completed == 2);
  // b waits for a's release (about 1s) when woken, for its next attempt (5s) when polling.
  CHECK(polling.rec.metrics.wait_ns.max() >= 5 * admit::sim::sec);
  CHECK(woken.rec.metrics.wait_ns.max() < 1100 * admit::sim::ms);
  CHECK(woken.rec.metrics.wait_ns.max() >= 990 * admit::sim::ms);  // b came 10ms after a
}

namespace {

// fair's starved line (docs/designs.md, "`fair` and the waiters that give up"): one worker, a limit of 1, a 10s
// lease, a 5s acquire budget and an item a second. The worker crashes at 1s holding the permit it was granted at
// 0.5ms and is back at 2s; the permit stays live until 10.0005s, so the waiters before then give up.
json fair_give_up_doc() {
  return json::parse(R"({"name": "fair_give_up", "seed": 1,
    "gate": {"kind": "lease", "limit": 1, "lease": "10s", "acquire_timeout": "5s",
             "backoff": {"kind": "fixed", "delay": "200ms"}},
    "fleet": {"workers": 1},
    "service": {"portal_cap": 1, "service_time": "3s", "client_timeout": "20s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 60, "every": "1s"}]},
    "faults": {"schedule": [{"at": "1s", "kind": "crash", "target": "worker:0", "duration": "1s"}]}})");
}

// The times of a run's grants and of its releases that found no permit (the redis entries "acquire T -> 1" and
// "release T -> 0"), from the whole trace.
class fair_line_log final : public admit::check::trace_sink {
 public:
  std::vector<admit::sim::vtime_ns> grants, empty_releases;
  void begin_run(std::string_view) override {}
  void entry(const admit::check::trace_line& e) noexcept override {
    if (e.source != "redis") return;
    if (e.what.starts_with("acquire ") && e.what.ends_with(" -> 1")) grants.push_back(e.at_ns);
    if (e.what.starts_with("release ") && e.what.ends_with(" -> 0")) empty_releases.push_back(e.at_ns);
  }
  void end_run() override {}
  void lost(std::string_view) noexcept override {}
};

admit::world::run_record run_fair_line(const json& doc, fair_line_log& log) {
  json parsed;
  const admit::scenario::scenario sc =
      admit::scenario::load_scenario_text(doc.dump(2), parsed, {".", admit::scenario::plain_file_reader()});
  std::vector<admit::world::run_record> runs = admit::world::run_all(sc, 1, {}, &log);
  REQUIRE(runs.size() == 1);
  return std::move(runs.front());
}

// The first grant at or after `from`, or -1.
admit::sim::vtime_ns first_grant_from(const fair_line_log& log, admit::sim::vtime_ns from) {
  for (const admit::sim::vtime_ns at : log.grants)
    if (at >= from) return at;
  return -1;
}

}  // namespace

TEST_CASE("a fair waiter that gives up leaves the line, and the one behind it is granted once a permit is free", "[world][protocol]") {
  // Goal: client.on_give_up "release" (the variant fair's, and fair.json's) removes the starvation of fair's line.
  // Method: fair_give_up_doc through the variant, through fair.json as shipped, and through fair.json with
  // on_give_up "stop" (the client before the fix, kept as the contrast that shows the test can fail). Releasing:
  // every waiter that gave up before 10s left the line, the next poll after the permit's expiry is granted, every
  // invariant holds and only the crashed item and the one that gave up are lost. Stopping: the waiters who gave up
  // keep their places for the queue timeout (20s) and each newcomer queues behind them, so acquires are refused
  // with the permit free from 10s to past the progress bound (40s): liveness, refused_with_free_capacity, at 50s.
  constexpr admit::sim::vtime_ns sec = admit::sim::sec, ms = admit::sim::ms;
  constexpr admit::sim::vtime_ns permit_free_ns = 10 * sec + 500'000;  // the crashed holder's grant plus the lease
  json variant = fair_give_up_doc();
  variant["gate"]["variant"] = "fair";
  json shipped = fair_give_up_doc();
  shipped["gate"]["protocol"] = "gate/redis/protocols/fair.json";
  json stopping = fair_give_up_doc();
  json p = builtin_inline("fair");
  REQUIRE(p["client"]["on_give_up"] == "release");
  p["client"]["on_give_up"] = "stop";
  stopping["gate"]["protocol"] = p;

  for (const json* doc : {&variant, &shipped}) {
    INFO(doc->dump());
    fair_line_log log;
    const admit::world::run_record rec = run_fair_line(*doc, log);
    CHECK_FALSE(rec.inconclusive.has_value());
    CHECK_FALSE(rec.any_violation());
    CHECK(invariant(rec, "liveness").holds);
    // The crashed worker's item, and item 2, which waited 2s to 7s behind the live permit and gave up.
    CHECK(rec.metrics.completed == 58);
    CHECK(rec.lease->deferred == 1);
    // Its release found no permit, in the world as in the Lua (it held a place in line only).
    CHECK(log.empty_releases == std::vector<admit::sim::vtime_ns>{7 * sec + 1'500'000});
    // Granted at the first poll after the permit's expiry: within one retry (200ms) and a round trip.
    const admit::sim::vtime_ns next = first_grant_from(log, permit_free_ns);
    CHECK(next >= permit_free_ns);
    CHECK(next <= permit_free_ns + 200 * ms + 2 * ms);
  }

  fair_line_log log;
  const admit::world::run_record rec = run_fair_line(stopping, log);
  CHECK_FALSE(rec.inconclusive.has_value());
  CHECK(log.empty_releases.empty());
  const admit::world::invariant_result& live = invariant(rec, "liveness");
  CHECK_FALSE(live.holds);
  REQUIRE(live.first.has_value());
  CHECK(live.first->at_ns >= 50 * sec);
  CHECK(live.first->at_ns < 51 * sec);
  CHECK(live.first->detail.find("refused from 10.016s to 50.024s") != std::string::npos);
  REQUIRE_FALSE(live.causes.empty());
  for (const auto& c : live.causes) CHECK(c.kind == "refused_with_free_capacity");
  // No grant after the crashed holder's: each waiter that gave up blocks the next for 20s, longer than its 5s
  // budget, so the line never recovers and no item completes. Every other invariant holds (a liveness defect only).
  CHECK(first_grant_from(log, permit_free_ns) == -1);
  CHECK(rec.metrics.completed == 0);
  for (const auto& inv : rec.invariants)
    if (inv.name != "liveness") CHECK(inv.holds);
}

namespace {

// gate/redis/protocols/renewal.json with its scripts inline and `client` as given.
json renewal_protocol(const json& client) {
  json p = json::parse(admit::test::slurp("gate/redis/protocols/renewal.json"));
  for (auto& [name, script] : p["scripts"].items()) {
    const std::string file = script["file"].get<std::string>();
    script = json{{"source", admit::test::slurp("gate/redis/protocols/" + file)}, {"origin", file}};
  }
  p["client"] = client;
  return p;
}

}  // namespace

TEST_CASE("client.renew_timing fixed_rate renews on the interval from the grant, fixed_delay after each answer", "[world][protocol]") {
  // Goal: the renewal schedule is honoured by the world. Method: two holders renewing every 1s under 9.5s of work,
  // each renewal a 1ms round trip: a fixed delay drifts 1ms a renewal, a fixed rate does not, so over the same
  // work both would renew 9 times per item; a server paused from 1.5s to 2.9s holds the renewal due at 2s, and
  // the fixed-delay client's later renewals all shift by 0.9s (8 per item), the fixed-rate one's do not (9).
  json doc = json::parse(R"({"name": "timing", "seed": 5,
    "gate": {"kind": "lease", "limit": 2, "lease": "3s"},
    "fleet": {"workers": 2},
    "service": {"service_time": "9500ms"},
    "workload": {"arrivals": [{"kind": "constant", "count": 2, "every": "1ms"}]},
    "faults": {"schedule": [{"at": "1500ms", "kind": "pause", "target": "redis", "duration": "1400ms"}]}})");
  const auto renewals = [&](const char* timing) {
    json d = doc;
    d["gate"]["protocol"] = renewal_protocol(json{{"renew_every", "1s"}, {"renew_timing", timing}});
    const auto r = render_doc(d, 5);
    REQUIRE(r.rec.lease.has_value());
    return r.rec.lease->redis_calls;
  };
  const std::uint64_t delay = renewals("fixed_delay");
  const std::uint64_t rate = renewals("fixed_rate");
  CHECK(rate == delay + 2);
}

TEST_CASE("client.deadline_clock wall gives up early when the caller's clock steps forward", "[world][protocol]") {
  // Goal: the acquire deadline's clock is honoured by the world. Method: one permit held for 5s; worker 1 waits
  // with a 2s acquire timeout while its wall clock steps 10s forward at 300ms. On the monotonic clock it gives up
  // at 2s; on its wall clock at its first attempt after the step.
  json doc = json::parse(R"({"name": "deadline", "seed": 5,
    "gate": {"kind": "lease", "limit": 1, "lease": "10s", "acquire_timeout": "2s"},
    "fleet": {"workers": 2},
    "service": {"service_time": "5s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 2, "every": "100ms"}]},
    "faults": {"schedule": [{"at": "300ms", "kind": "clock_step", "target": "worker:1", "step": "+10s"}]}})");
  const auto run = [&](const char* clock) {
    json d = doc;
    d["gate"]["protocol"] = renewal_protocol(json{{"deadline_clock", clock}});
    const auto r = render_doc(d, 5);
    REQUIRE(r.rec.lease.has_value());
    return std::pair{r.rec.lease->deferred, r.rec.lease->redis_calls};
  };
  const auto [mono_deferred, mono_calls] = run("monotonic");
  const auto [wall_deferred, wall_calls] = run("wall");
  CHECK(mono_deferred == 1);
  CHECK(wall_deferred == 1);
  // Polls every 200ms: about 10 until 2s on the monotonic clock, 2 or 3 before the wall clock's deadline.
  CHECK(mono_calls >= wall_calls + 6);
}

TEST_CASE("client.on_renewal_lost crash_process kills the worker with its work and restarts it after restart_after", "[world][protocol]") {
  // Goal: the common library default, a lost lease as an unhandled error, is honoured by the world. Method: a
  // Redis restart without persistence at 3s wipes every permit; the holders' next renewals find them gone. With
  // keep_working they finish their requests; with crash_process each of them dies with its request (ended
  // "crashed") and comes back 2s later to take the rest of the queue.
  json doc = json::parse(R"({"name": "crash_on_loss", "seed": 5,
    "gate": {"kind": "lease", "limit": 2, "lease": "6s"},
    "fleet": {"workers": 2},
    "service": {"service_time": "5s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 6, "every": "10ms"}]},
    "faults": {"schedule": [{"at": "3s", "kind": "redis_restart", "target": "redis"}]}})");
  const auto run = [&](const json& client) {
    json d = doc;
    d["gate"]["protocol"] = renewal_protocol(client);
    return render_doc(d, 5).rec;
  };
  const auto keep = run(json{{"renew_every", "1s"}});
  const auto crash = run(json{{"renew_every", "1s"}, {"on_renewal_lost", "crash_process"}, {"restart_after", "2s"}});
  CHECK(keep.metrics.refused.count("crashed") == 0);
  REQUIRE(crash.metrics.refused.count("crashed") == 1);
  CHECK(crash.metrics.refused.at("crashed") == 2);  // both holders' requests
  CHECK(crash.metrics.completed == 4);  // the restarted workers served the other four
  CHECK(keep.metrics.completed == 6);
}

TEST_CASE("a call's timeout is the client's wait for the reply: a duration ends it, none waits for ever", "[world][protocol]") {
  // Goal: the call-timeout policy is honoured by the world. Method: Redis paused from 50ms to 450ms while two
  // workers poll a gate of one. With the default 1s socket timeout no call fails; with a 100ms acquire timeout
  // the calls held by the pause time out (the client counts them lost and polls again). A release that waits for
  // ever under a partition that loses its reply hangs its worker: the run's liveness check fails.
  json doc = json::parse(R"({"name": "timeouts", "seed": 5,
    "gate": {"kind": "lease", "limit": 1, "lease": "10s"},
    "fleet": {"workers": 2},
    "service": {"service_time": "200ms"},
    "workload": {"arrivals": [{"kind": "constant", "count": 4, "every": "10ms"}]},
    "faults": {"schedule": [{"at": "50ms", "kind": "pause", "target": "redis", "duration": "400ms"}]}})");
  const auto errors = [&](const json& acquire_timeout) {
    json d = doc;
    json p = renewal_protocol(json::object());
    p.erase("renew");
    p["scripts"].erase("renew");
    if (!acquire_timeout.is_null()) p["acquire"]["timeout"] = acquire_timeout;
    d["gate"]["protocol"] = p;
    const auto r = render_doc(d, 5);
    REQUIRE(r.rec.lease.has_value());
    return r.rec.lease->redis_errors;
  };
  CHECK(errors(json()) == 0);
  CHECK(errors("100ms") >= 1);

  json hang = json::parse(R"({"name": "hang", "seed": 5,
    "gate": {"kind": "lease", "limit": 1, "lease": "10s"},
    "fleet": {"workers": 1},
    "service": {"service_time": "100ms"},
    "workload": {"arrivals": [{"kind": "constant", "count": 2, "every": "10ms"}]},
    "checks": {"invariants": ["liveness"]},
    "faults": {"schedule": [{"at": "100500us", "kind": "partition", "between": ["worker:0", "redis"], "duration": "50ms"}]}})");
  const auto live = [&](const char* release_timeout) {
    json d = hang;
    json p = renewal_protocol(json::object());
    p.erase("renew");
    p["scripts"].erase("renew");
    p["release"]["timeout"] = release_timeout;
    d["gate"]["protocol"] = p;
    const auto r = render_doc(d, 5);
    const json runs = runs_of(r);
    REQUIRE(runs.size() == 1);
    return runs.begin().value()["invariants"]["liveness"]["holds"].get<bool>();
  };
  CHECK(live("1s"));
  CHECK_FALSE(live("none"));
}

TEST_CASE("a call with no timeout whose request is lost stays the client's until a crash ends it", "[world][protocol]") {
  // Goal: a regression: a call with "timeout": "none" that a partition loses is held by no timeout task, and was
  // freed while its client (and the crash's cancellation) still pointed at it. Method: the worker's acquire is
  // lost in a partition, the worker crashes while it waits and restarts, and its new acquire is lost too; the
  // run must end (the sanitizer build runs this test) with the waiting worker's requests unended.
  json doc = json::parse(R"({"name": "lost_forever", "seed": 5,
    "gate": {"kind": "lease", "limit": 1, "lease": "10s"},
    "fleet": {"workers": 1},
    "service": {"service_time": "100ms"},
    "workload": {"arrivals": [{"kind": "constant", "count": 2, "every": "10ms"}]},
    "checks": {"invariants": ["liveness"]},
    "faults": {"schedule": [{"at": "0ms", "kind": "partition", "between": ["worker:0", "redis"], "duration": "1s"},
                            {"at": "300ms", "kind": "crash", "target": "worker:0", "duration": "100ms"}]}})");
  json p = renewal_protocol(json::object());
  p.erase("renew");
  p["scripts"].erase("renew");
  p["acquire"]["timeout"] = "none";
  doc["gate"]["protocol"] = p;
  const auto r = render_doc(doc, 5);
  const json runs = runs_of(r);
  REQUIRE(runs.size() == 1);
  CHECK_FALSE(runs.begin().value()["invariants"]["liveness"]["holds"].get<bool>());
  CHECK(r.rec.metrics.completed == 0);
}
