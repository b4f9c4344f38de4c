// The designs of scenarios/designs/ and the world features they need
// (docs/designs.md): each holds the fault its catalogue scenario shows, and a
// deliberately broken copy of it does not, so that each check can fail.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "world_test_support.hpp"

namespace {

using json = nlohmann::ordered_json;
using admit::world::run_record;

using admit::test::portal_held;
using admit::test::run_at_doc_seed;

// A broken copy of a script: `text` with its one `from` replaced by `to` (the test fails if `from` is missing).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// restart_grace inline, its acquire's Lua as given.
json restart_grace_inline(const std::string& acquire_lua) {
  json p = json::parse(admit::test::slurp("scenarios/designs/restart_grace.json"));
  p["scripts"]["acquire"] = json{{"source", acquire_lua}, {"origin", "restart_grace_acquire.lua"}};
  p["scripts"]["release"] = json{{"source", admit::test::slurp("gate/redis/lua/release.lua")}, {"origin", "release.lua"}};
  return p;
}

// process_grace (scenarios/designs/process_grace/) inline, its acquire's Lua as given.
json process_grace_inline(const std::string& acquire_lua) {
  json p = json::parse(admit::test::slurp("scenarios/designs/process_grace/protocol.json"));
  p["scripts"]["acquire"] = json{{"source", acquire_lua}, {"origin", "acquire.lua"}};
  p["scripts"]["release"] = json{{"source", admit::test::slurp("gate/redis/lua/release.lua")}, {"origin", "release.lua"}};
  return p;
}

}  // namespace

TEST_CASE("restart_grace holds restarts without persistence; without its grace it does not", "[world][designs]") {
  // Goal: the grace is what holds. Method: redis_restart_grace (a restart at 40s, more drawn about once a minute)
  // through restart_grace's Lua, then through the same Lua with the grace's refusal removed (a broken copy).
  json doc = json::parse(admit::test::slurp("scenarios/redis_restart_grace.json"));
  doc.erase("expect");
  doc["gate"].erase("variant");
  const std::string lua = admit::test::slurp("scenarios/designs/restart_grace_acquire.lua");
  doc["gate"]["protocol"] = restart_grace_inline(lua);
  const auto held = run_at_doc_seed(doc);
  REQUIRE(held.size() == 1);
  CHECK(portal_held(held.front()));
  CHECK_FALSE(held.front().any_violation());
  CHECK_FALSE(held.front().inconclusive.has_value());

  doc["gate"]["protocol"] =
      restart_grace_inline(replaced(lua, "if now_ms < tonumber(up) + lease_ms then", "if false then"));
  const auto no_grace = run_at_doc_seed(doc);
  REQUIRE(no_grace.size() == 1);
  CHECK_FALSE(portal_held(no_grace.front()));
}

// A failover after the first grace: one request at 0s starts the grace, four take every permit at 35s (20s
// requests on a 30s lease), the primary fails over at 36s to a replica 2s behind that never saw them, and four
// more requests arrive at 38s.
json warm_failover() {
  return json::parse(R"({"name": "warm_failover", "seed": 1,
    "gate": {"kind": "lease", "limit": 4, "lease": "30s", "acquire_timeout": "60s"},
    "fleet": {"workers": 9},
    "service": {"portal_cap": 4, "service_time": "20s", "client_timeout": "60s"},
    "workload": {"requests": [{"id": "warm", "at": "0ms", "service": "1s"},
      {"id": "a1", "at": "35s"}, {"id": "a2", "at": "35010ms"}, {"id": "a3", "at": "35020ms"}, {"id": "a4", "at": "35030ms"},
      {"id": "b1", "at": "38s", "service": "5s"}, {"id": "b2", "at": "38010ms", "service": "5s"},
      {"id": "b3", "at": "38020ms", "service": "5s"}, {"id": "b4", "at": "38030ms", "service": "5s"}]},
    "faults": {"schedule": [{"at": "36s", "kind": "redis_failover", "replication_lag": "2s", "duration": "500ms"}]}})");
}

TEST_CASE("process_grace holds a restart that keeps the marker and a failover; keyed on the data alone it does not",
          "[world][designs]") {
  // Goal: the change of run id is what holds. Method: redis_restart_keeps_marker (an aof_everysec restart after
  // the first grace keeps the record and loses the last second's grants) and a failover after the first grace to
  // a replica that never saw four grants (no WAIT), both through process_grace's Lua: both hold. Then a broken
  // copy that starts the grace only when the record is missing (what restart_grace looks at): both break the cap.
  const std::string lua = admit::test::slurp("scenarios/designs/process_grace/acquire.lua");
  const std::string broken = replaced(lua, "if seen[1] ~= run_id then", "if not seen[1] then");
  json restart = json::parse(admit::test::slurp("scenarios/redis_restart_keeps_marker.json"));
  restart.erase("expect");
  for (json doc : {restart, warm_failover()}) {
    INFO(doc["name"].get<std::string>());
    doc["gate"].erase("variant");
    doc["gate"]["protocol"] = process_grace_inline(lua);
    const auto held = run_at_doc_seed(doc);
    REQUIRE(held.size() == 1);
    CHECK(portal_held(held.front()));
    CHECK_FALSE(held.front().any_violation());
    CHECK_FALSE(held.front().inconclusive.has_value());
    CHECK(held.front().metrics.completed == 9);
    doc["gate"]["protocol"] = process_grace_inline(broken);
    const auto keyed_on_data = run_at_doc_seed(doc);
    REQUIRE(keyed_on_data.size() == 1);
    CHECK_FALSE(portal_held(keyed_on_data.front()));
  }
}

TEST_CASE("a portal that frees the slot when the client closes holds client timeouts and crashes", "[world][designs]") {
  // Goal: service.on_client_close is honoured for read timeouts and crashes. Method: client_close_frees_slot
  // (3s read timeouts under requests of up to 10s, two holders crashing mid-request) holds under free_slot for
  // every variant, and breaks the portal's cap under keep_work.
  json doc = json::parse(admit::test::slurp("scenarios/client_close_frees_slot.json"));
  doc.erase("expect");
  const auto freed = run_at_doc_seed(doc);
  REQUIRE(freed.size() == 2);
  for (const auto& r : freed) {
    CHECK_FALSE(r.any_violation());
    CHECK(r.metrics.client_timeouts > 0);
  }
  doc["service"]["on_client_close"] = "keep_work";
  const auto kept = run_at_doc_seed(doc);
  REQUIRE(kept.size() == 2);
  for (const auto& r : kept) CHECK_FALSE(portal_held(r));
}

TEST_CASE("a crash under free_slot frees the crashed holder's slot at once", "[world][designs]") {
  // Goal: a crash closes the connection under free_slot. Method: one permit, a 20s request whose holder crashes at
  // 1s, a 3s lease; under keep_work the work runs on past the lease and the next grant goes over the cap, under
  // free_slot it stopped at the crash.
  json doc = json::parse(R"({"name": "crash_frees", "seed": 1,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 1, "lease": "3s"},
    "fleet": {"workers": 2},
    "service": {"portal_cap": 1, "service_time": "20s", "client_timeout": "60s", "over_cap": "serve"},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "2s", "service": "1s"}]},
    "faults": {"schedule": [{"at": "1s", "kind": "crash", "target": "worker:0"}]}})");
  const auto kept = run_at_doc_seed(doc);
  CHECK_FALSE(portal_held(kept.front()));
  doc["service"]["on_client_close"] = "free_slot";
  const auto freed = run_at_doc_seed(doc);
  CHECK(portal_held(freed.front()));
  CHECK_FALSE(freed.front().any_violation());
}

TEST_CASE("stop_new_work makes the difference for a process paused again", "[world][designs]") {
  // Goal: on_renewal_lost stop_new_work retires the process whose renewal reported the loss. Method: sick_worker
  // through stop_new_work, and the same protocol with keep_working (the renewal variant's client).
  json doc = json::parse(admit::test::slurp("scenarios/sick_worker.json"));
  doc.erase("expect");
  doc["gate"].erase("variant");
  json p = json::parse(admit::test::slurp("scenarios/designs/stop_new_work.json"));
  for (const char* s : {"acquire", "renew", "release"}) {
    const std::string file = p["scripts"][s]["file"].get<std::string>();
    p["scripts"][s] = json{{"source", admit::test::slurp("scenarios/designs/" + file)}, {"origin", file}};
  }
  doc["gate"]["protocol"] = p;
  const auto stop = run_at_doc_seed(doc);
  REQUIRE(stop.size() == 1);
  CHECK_FALSE(stop.front().any_violation());
  CHECK(stop.front().lease->renewals_lost == 1);
  p["client"]["on_renewal_lost"] = "keep_working";
  doc["gate"]["protocol"] = p;
  const auto keep = run_at_doc_seed(doc);
  CHECK_FALSE(portal_held(keep.front()));
}
