// The protocol format's reach in the world: what real lease semaphores do
// that a protocol file says as data, each shown to change what the simulated
// client and server do. Shard channels (SPUBLISH / SSUBSCRIBE) are a
// namespace of their own; a permit id the acquire answers is what release
// sends back as {permit}, and the checkers count the holders by it; set-up
// calls run before the fleet (and again after a restart where the protocol
// says so), and a failing one makes the run inconclusive; a rule reads one
// element of an array reply; an acquire whose call was lost gives up at once
// when its policy says so.
#include <catch2/catch.hpp>
#include <string>

#include "world_test_support.hpp"

namespace {

using json = nlohmann::ordered_json;

admit::test::rendered render(const json& doc, std::uint64_t seed = 1) {
  const std::string text = doc.dump(2);
  json parsed;
  const admit::scenario::scenario sc =
      admit::scenario::load_scenario_text(text, parsed, {".", admit::scenario::plain_file_reader()});
  admit::test::rendered r;
  r.runs = admit::world::run_all(sc, seed, {});
  r.rec = r.runs.front();
  return r;
}

// A protocol file of scenarios/protocols/, its scripts inlined (the doc is loaded from text).
json protocol_file(const std::string& dir, const std::string& file = "protocol.json") {
  const std::string base = "scenarios/protocols/" + dir + "/";
  json p = json::parse(admit::test::slurp(base + file));
  for (auto& [name, s] : p["scripts"].items()) {
    const std::string lua = s["file"].get<std::string>();
    s = json{{"source", admit::test::slurp(base + lua)}, {"origin", lua}};
  }
  return p;
}

// One permit, two workers, requests of 1s 10ms apart, a fixed retry of 5s: the second waits for the first's
// release (about 1s) only if that release wakes it.
json two_requests(const json& protocol) {
  json doc = json::parse(R"({"name": "reach", "seed": 1,
    "gate": {"kind": "lease", "limit": 1, "lease": "15s"},
    "fleet": {"workers": 2},
    "service": {"portal_cap": 1, "service_time": "1s"},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "10ms"}]}})");
  doc["gate"]["protocol"] = protocol;
  return doc;
}

json server_time_with_release(const std::string& publish) {
  json p = json::parse(admit::test::slurp("gate/redis/protocols/server_time.json"));
  for (auto& [name, s] : p["scripts"].items()) {
    const std::string lua = s["file"].get<std::string>();
    s = json{{"source", admit::test::slurp("gate/redis/lua/" + lua)}, {"origin", lua}};
  }
  p["scripts"]["release"] = json{{"source", "redis.call('" + publish + "', KEYS[1] .. ':free', ARGV[1])\n"
                                            "return redis.call('ZREM', KEYS[1], ARGV[1])\n"},
                                 {"origin", "publishing_release.lua"}};
  p["release"] = json{{"script", "release"}, {"keys", {"{key}"}}, {"args", {"{token}"}}};
  p["client"]["retry"] = json{{"kind", "fixed"}, {"delay", "5s"}};
  return p;
}

}  // namespace

TEST_CASE("a shard channel hears SPUBLISH and not PUBLISH, a plain one the reverse", "[world][protocol][reach]") {
  // Goal: the two pub/sub namespaces are apart, as in Redis. Method: a waiter listening on a shard channel (and
  // on a plain one) while the release PUBLISHes (and SPUBLISHes): only a matching pair wakes it before its retry.
  const auto wait_of = [](const std::string& publish, bool sharded) {
    json p = server_time_with_release(publish);
    p["client"]["wake_on"] = json{{"channel", "{key}:free"}, {"sharded", sharded}};
    const auto r = render(two_requests(p));
    CHECK_FALSE(r.rec.any_violation());
    CHECK(r.rec.metrics.completed == 2);
    return r.rec.metrics.wait_ns.max();
  };
  CHECK(wait_of("SPUBLISH", true) < 1100 * admit::sim::ms);
  CHECK(wait_of("PUBLISH", false) < 1100 * admit::sim::ms);
  CHECK(wait_of("PUBLISH", true) >= 5 * admit::sim::sec);
  CHECK(wait_of("SPUBLISH", false) >= 5 * admit::sim::sec);
}

TEST_CASE("a permit id the acquire answers is what the release gives back", "[world][protocol][reach]") {
  // Goal: {permit}. Method: scenarios/protocols/permit_ids (bulk-string ids, a counter set up once) with one
  // permit and a 15s lease: the second request is granted right after the first's release, which happens only if
  // the release sends the id the acquire answered (else the permit stays taken until it expires, 15s later).
  json p = protocol_file("permit_ids");
  p["client"]["retry"] = json{{"kind", "fixed"}, {"delay", "10ms"}};
  const auto r = render(two_requests(p));
  CHECK(r.rec.verdict() == std::string("pass"));
  CHECK(r.rec.metrics.completed == 2);
  CHECK(r.rec.metrics.wait_ns.max() < 1100 * admit::sim::ms);
  CHECK(r.rec.lease->failed_releases == 0);
}

TEST_CASE("a script that hands one permit id to two grants is inconclusive, never a false verdict",
          "[world][protocol][reach]") {
  // Goal: the world's permit names stay one to one. Method: an acquire that always answers the id "same".
  json p = protocol_file("permit_ids");
  p["scripts"]["acquire"] = json{{"source", "redis.call('HSET', KEYS[2], 'same', 99999999999999)\n"
                                            "redis.call('SET', KEYS[1], 0)\nreturn 'same'\n"},
                                 {"origin", "same_id.lua"}};
  p["holders"].erase("free");
  json doc = two_requests(p);
  doc["gate"]["limit"] = 2;
  doc["service"]["portal_cap"] = 2;
  const auto r = render(doc);
  REQUIRE(r.rec.inconclusive.has_value());
  CHECK(r.rec.inconclusive->kind == "protocol_inconsistent");
  CHECK(r.rec.inconclusive->detail.find("handed one permit to two grants") != std::string::npos);
}

TEST_CASE("set-up calls run before the fleet, and a failing one makes the run inconclusive",
          "[world][protocol][reach]") {
  // Goal: setup. Method: permit_ids without its set-up never grants (liveness); with a set-up that errs, or that
  // its rule reads as not done, the run is inconclusive (setup_failed) and names the call.
  json p = protocol_file("permit_ids");
  p["client"]["acquire_timeout"] = "2s";
  json doc = two_requests(p);
  CHECK(render(doc).rec.verdict() == std::string("pass"));

  json none = p;
  none.erase("setup");
  doc["gate"]["protocol"] = none;
  const auto never = render(doc);
  CHECK(never.rec.verdict() == std::string("violation"));
  CHECK(never.rec.metrics.completed == 0);

  json errs = p;
  errs["setup"]["calls"][0] = json{{"command", {"INCR", "{key}:free", "{limit}"}}};
  doc["gate"]["protocol"] = errs;
  const auto failed = render(doc);
  REQUIRE(failed.rec.inconclusive.has_value());
  CHECK(failed.rec.inconclusive->kind == "setup_failed");
  CHECK(failed.rec.inconclusive->detail.find("set-up call 1 (INCR)") != std::string::npos);
  CHECK(failed.rec.metrics.completed == 0);

  json no = p;
  no["setup"]["calls"][0]["done_when"] = "equals_1";  // SET answers OK, not 1
  doc["gate"]["protocol"] = no;
  const auto not_done = render(doc);
  REQUIRE(not_done.rec.inconclusive.has_value());
  CHECK(not_done.rec.inconclusive->kind == "setup_failed");
  CHECK(not_done.rec.inconclusive->detail.find("reads as not done") != std::string::npos);
}

TEST_CASE("a set-up run again after a restart sets up what the restart wiped", "[world][protocol][reach]") {
  // Goal: again_after_restart. Method: a restart without persistence at 3s between two requests; the second
  // (at 4s) is granted only when the set-up ran again as Redis came back.
  json p = protocol_file("permit_ids");
  p["client"]["acquire_timeout"] = "3s";
  json doc = json::parse(R"({"name": "resetup", "seed": 1,
    "gate": {"kind": "lease", "limit": 1, "lease": "15s"},
    "fleet": {"workers": 1},
    "service": {"portal_cap": 1, "service_time": "1s"},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "4s"}]},
    "faults": {"schedule": [{"at": "3s", "kind": "redis_restart", "target": "redis", "duration": "500ms"}]}})");
  doc["gate"]["protocol"] = p;
  CHECK(render(doc).rec.metrics.completed == 1);
  p["setup"]["again_after_restart"] = true;
  doc["gate"]["protocol"] = p;
  const auto again = render(doc);
  CHECK(again.rec.metrics.completed == 2);
  CHECK(again.rec.verdict() == std::string("pass"));
}

TEST_CASE("a rule reads one element of an array reply", "[world][protocol][reach]") {
  // Goal: {"element": N, "is": RULE}. Method: an acquire answering {granted, wait_ms}: read at element 1 it grants;
  // read at element 2 (a wait of 0) it never does.
  json p = server_time_with_release("PUBLISH");
  p["client"]["acquire_timeout"] = "1s";
  p["scripts"]["acquire"]["source"] =
      "local t = redis.call('TIME')\nlocal now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
      "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))\n"
      "if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return {0, 100} end\n"
      "redis.call('ZADD', KEYS[1], now, ARGV[3])\nreturn {1, 0}\n";
  p["acquire"]["granted_when"] = json{{"element", 1}, {"is", "equals_1"}};
  const auto first = render(two_requests(p));
  CHECK(first.rec.verdict() == std::string("pass"));
  CHECK(first.rec.metrics.completed == 2);
  p["acquire"]["granted_when"] = json{{"element", 2}, {"is", "equals_1"}};
  const auto second = render(two_requests(p));
  CHECK(second.rec.metrics.completed == 0);
}

TEST_CASE("an acquire whose call was lost retries, or gives up at once", "[world][protocol][reach]") {
  // Goal: on_lost_acquire. Method: Redis cut off from 0 to 3s, a request at 100ms with a 20s acquire timeout: a
  // client that retries is granted after the partition; one that gives up defers its item at its first lost call.
  json p = server_time_with_release("PUBLISH");
  p["client"]["retry"] = json{{"kind", "fixed"}, {"delay", "200ms"}};
  p["client"]["acquire_timeout"] = "20s";
  json doc = json::parse(R"({"name": "lost", "seed": 1,
    "gate": {"kind": "lease", "limit": 1, "lease": "15s"},
    "fleet": {"workers": 1},
    "service": {"portal_cap": 1, "service_time": "1s"},
    "workload": {"requests": [{"id": "a", "at": "100ms"}]},
    "faults": {"schedule": [{"at": "0ms", "kind": "partition", "target": "redis", "duration": "3s"}]}})");
  doc["gate"]["protocol"] = p;
  const auto retried = render(doc);
  CHECK(retried.rec.metrics.completed == 1);
  p["client"]["on_lost_acquire"] = "give_up";
  doc["gate"]["protocol"] = p;
  const auto gave_up = render(doc);
  CHECK(gave_up.rec.metrics.completed == 0);
  CHECK(gave_up.rec.lease->deferred == 1);
  CHECK(gave_up.rec.metrics.simulated_ns < 2 * admit::sim::sec);
}

TEST_CASE("a set-up run again that wipes the holders takes a working holder's permit", "[world][protocol][reach]") {
  // Goal: the cause setup_removed. Method: permit_ids whose set-up "resets the semaphore" (DEL the taken permits,
  // SET the counter) on every reconnect; a restart that keeps every write (aof_always) at 1s, during worker 0's
  // 3s request: the re-run set-up frees its permit, worker 1 is granted it, and the portal sees two requests.
  json p = protocol_file("permit_ids");
  p["setup"] = json{{"calls", {json{{"command", {"DEL", "{key}:taken"}}}, json{{"command", {"SET", "{key}:free", "{limit}"}}}}},
                    {"again_after_restart", true}};
  json doc = json::parse(R"({"name": "reset", "seed": 1,
    "gate": {"kind": "lease", "limit": 1, "lease": "15s"},
    "fleet": {"workers": 2},
    "service": {"portal_cap": 1, "service_time": "3s", "over_cap": "serve"},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "1200ms"}]},
    "faults": {"schedule": [{"at": "1s", "kind": "redis_restart", "target": "redis", "duration": "500ms",
                             "persistence": "aof_always"}]}})");
  doc["gate"]["protocol"] = p;
  const auto r = render(doc);
  CHECK(r.rec.verdict() == std::string("violation"));
  CHECK(r.rec.metrics.portal_inflight_max == 2);
  bool named = false;
  for (const auto& inv : r.rec.invariants)
    for (const auto& c : inv.causes) named = named || c.kind == std::string("setup_removed");
  CHECK(named);
}

TEST_CASE("an acquire retried under a fresh token leaves the lost call's permit behind", "[world][protocol][reach]") {
  // Goal: on_lost_acquire "new_token". Method: Redis paused from 0 to 1.5s, one permit, a 5s lease, a request at
  // 100ms: its first call times out at 1.1s and runs at 1.5s, granting the item's token. Retried under the same
  // token, the second attempt is granted that permit again (at 1.5s); under a fresh token it is refused until the first
  // grant, held by no worker, expires at 6.5s. The acquire grants a token it already holds again (idempotent).
  json p = server_time_with_release("PUBLISH");
  p["scripts"]["acquire"]["source"] =
      "local t = redis.call('TIME')\nlocal now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
      "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))\n"
      "if redis.call('ZSCORE', KEYS[1], ARGV[3]) then redis.call('ZADD', KEYS[1], now, ARGV[3]) return 1 end\n"
      "if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end\n"
      "redis.call('ZADD', KEYS[1], now, ARGV[3])\nreturn 1\n";
  p["client"]["retry"] = json{{"kind", "fixed"}, {"delay", "200ms"}};
  p["client"]["acquire_timeout"] = "20s";
  json doc = json::parse(R"({"name": "fresh", "seed": 1,
    "gate": {"kind": "lease", "limit": 1, "lease": "5s"},
    "fleet": {"workers": 1},
    "service": {"portal_cap": 1, "service_time": "1s"},
    "workload": {"requests": [{"id": "a", "at": "100ms"}]},
    "faults": {"schedule": [{"at": "0ms", "kind": "pause", "target": "redis", "duration": "1500ms"}]}})");
  doc["gate"]["protocol"] = p;
  const auto same = render(doc);
  CHECK(same.rec.verdict() == std::string("pass"));
  CHECK(same.rec.metrics.completed == 1);
  CHECK(same.rec.metrics.wait_ns.max() < 2 * admit::sim::sec);
  p["client"]["on_lost_acquire"] = "new_token";
  doc["gate"]["protocol"] = p;
  const auto fresh = render(doc);
  CHECK(fresh.rec.verdict() == std::string("pass"));
  CHECK(fresh.rec.metrics.completed == 1);
  CHECK(fresh.rec.metrics.wait_ns.max() >= 6 * admit::sim::sec);
  CHECK(fresh.rec.metrics.wait_ns.max() < 7 * admit::sim::sec);
}
