// The quorum fields: gate.redis_nodes, a Redis fault's "node", the protocol
// client's "quorum" and the mutation quorum_off_by_one. Method: good values
// load (and round-trip through the explorer's writer), bad ones are refused at
// their JSON path with what was expected.
#include <catch2/catch.hpp>
#include <string>

#include "sim/explore/scenario_json.hpp"
#include "sim/scenario/loader.hpp"
#include "tests/scenario/scenario_test_support.hpp"

namespace {

using json = nlohmann::ordered_json;
using admit::test::read_bytes;
using admit::test::rejection;
using admit::test::source_path;

// A quorum protocol inline (server_time's acquire, the release); `client` is its client policy.
json quorum_protocol(const json& client, bool renew = false) {
  json p = {{"format", "admitsim-protocol/1"},
            {"name", "q"},
            {"scripts",
             {{"acquire", {{"source", read_bytes(source_path("gate/redis/lua/server_time_acquire.lua"))}}},
              {"release", {{"source", read_bytes(source_path("gate/redis/lua/release.lua"))}}}}},
            {"acquire", {{"script", "acquire"}, {"keys", {"{key}"}}, {"args", {"{lease_ms}", "{limit}", "{token}"}},
                         {"granted_when", "equals_1"}}},
            {"release", {{"script", "release"}, {"keys", {"{key}"}}, {"args", {"{token}"}}}},
            {"client", client}};
  if (renew) {
    p["scripts"]["renew"] = {{"source", read_bytes(source_path("gate/redis/lua/renew.lua"))}};
    p["renew"] = {{"script", "renew"}, {"keys", {"{key}"}}, {"args", {"{lease_ms}", "{token}"}}, {"kept_when", "equals_1"}};
  }
  return p;
}

json scenario_doc(const json& gate) {
  json d = {{"name", "t"}, {"gate", gate}, {"fleet", {{"workers", 2}}}};
  d["workload"] = json::parse(R"({"requests": [{"id": "a", "at": "0ms"}]})");
  return d;
}

json quorum_gate(std::int64_t nodes) {
  return {{"kind", "lease"}, {"limit", 1}, {"protocol", quorum_protocol({{"quorum", "majority"}})}, {"redis_nodes", nodes}};
}

std::string refused(const json& d) { return rejection(d.dump()); }

}  // namespace

TEST_CASE("redis_nodes: 1 to 9, and above 1 only with quorum protocols") {
  CHECK(refused(scenario_doc(quorum_gate(3))).empty());
  CHECK(refused(scenario_doc(quorum_gate(1))).empty());
  CHECK(refused(scenario_doc(quorum_gate(9))).empty());
  CHECK_THAT(refused(scenario_doc(quorum_gate(0))), Catch::StartsWith("/gate/redis_nodes: "));
  CHECK_THAT(refused(scenario_doc(quorum_gate(10))), Catch::StartsWith("/gate/redis_nodes: "));
  json g = quorum_gate(3);
  g["redis_nodes"] = "3";
  CHECK_THAT(refused(scenario_doc(g)), Catch::StartsWith("/gate/redis_nodes: "));
  // A built-in variant talks to one node.
  json v = {{"kind", "lease"}, {"limit", 1}, {"variant", "server_time"}, {"redis_nodes", 3}};
  CHECK_THAT(refused(scenario_doc(v)), Catch::StartsWith("/gate/redis_nodes: ") && Catch::Contains("built-in variants"));
  json both = quorum_gate(3);
  both["variant"] = "server_time";
  CHECK_THAT(refused(scenario_doc(both)), Catch::StartsWith("/gate/redis_nodes: "));
  // A single-node protocol likewise.
  json single = quorum_gate(3);
  single["protocol"] = quorum_protocol(json::object());
  CHECK_THAT(refused(scenario_doc(single)), Catch::StartsWith("/gate/redis_nodes: ") && Catch::Contains("\"q\""));
  // A variant with one node is as before.
  json plain = {{"kind", "lease"}, {"limit", 1}, {"variant", "server_time"}, {"redis_nodes", 1}};
  CHECK(refused(scenario_doc(plain)).empty());
}

TEST_CASE("a Redis fault names its node; out of range or on another target it is refused") {
  json d = scenario_doc(quorum_gate(3));
  d["faults"] = json::parse(R"({"schedule": [
    {"at": "1s", "kind": "redis_restart", "node": 2, "persistence": "none"},
    {"at": "1s", "kind": "redis_failover", "node": 1, "replication_lag": "1s"},
    {"at": "1s", "kind": "pause", "target": "redis", "node": 1, "duration": "1s"},
    {"at": "1s", "kind": "clock_step", "target": "redis", "node": 2, "step": "-1s"},
    {"at": "1s", "kind": "partition", "target": "redis", "node": 2, "duration": "1s"},
    {"at": "1s", "kind": "partition", "between": ["worker:1", "redis"], "node": 1, "duration": "1s"}]})");
  json parsed;
  const admit::scenario::scenario sc = admit::scenario::load_scenario_text(d.dump(), parsed);
  REQUIRE(sc.faults.schedule.size() == 6);
  CHECK(sc.faults.schedule[0].node == 2);
  CHECK(sc.faults.schedule[1].node == 1);
  CHECK(sc.faults.schedule[5].node == 1);
  CHECK(sc.gates.front().lease.redis_nodes == 3);
  // Written back and read again, the same scenario (node and redis_nodes round-trip).
  const json back = admit::explore::scenario_to_json(sc);
  const admit::scenario::scenario again = admit::scenario::load_scenario_text(back.dump());
  CHECK(again.gates.front().lease.redis_nodes == 3);
  for (std::size_t i = 0; i < sc.faults.schedule.size(); ++i) CHECK(again.faults.schedule[i].node == sc.faults.schedule[i].node);
  CHECK(admit::explore::scenario_to_json(again) == back);

  json out_of_range = scenario_doc(quorum_gate(3));
  out_of_range["faults"] = json::parse(R"({"schedule": [{"at": "1s", "kind": "redis_restart", "node": 3}]})");
  CHECK_THAT(refused(out_of_range), Catch::StartsWith("/faults/schedule/0/node: ") && Catch::Contains("0 to 2"));
  out_of_range["faults"]["schedule"][0]["node"] = -1;
  CHECK_THAT(refused(out_of_range), Catch::StartsWith("/faults/schedule/0/node: "));
  out_of_range["faults"]["schedule"][0]["node"] = "1";
  CHECK_THAT(refused(out_of_range), Catch::StartsWith("/faults/schedule/0/node: "));
  json one_node = scenario_doc(quorum_gate(1));
  one_node["faults"] = json::parse(R"({"schedule": [{"at": "1s", "kind": "redis_restart", "node": 1}]})");
  CHECK_THAT(refused(one_node), Catch::StartsWith("/faults/schedule/0/node: "));
  json on_worker = scenario_doc(quorum_gate(3));
  on_worker["faults"] = json::parse(R"({"schedule": [{"at": "1s", "kind": "crash", "target": "worker:0", "node": 1}]})");
  CHECK_THAT(refused(on_worker), Catch::StartsWith("/faults/schedule/0/node: "));
}

TEST_CASE("client.quorum: single, majority or all; a quorum client neither renews nor listens") {
  json g = quorum_gate(3);
  g["protocol"] = quorum_protocol({{"quorum", "all"}});
  CHECK(refused(scenario_doc(g)).empty());
  g["protocol"] = quorum_protocol({{"quorum", "all"}}, true);
  CHECK_THAT(refused(scenario_doc(g)), Catch::Contains("/client/quorum: ") && Catch::Contains("renew"));
  g["protocol"] = quorum_protocol({{"quorum", "some"}});
  CHECK_THAT(refused(scenario_doc(g)), Catch::Contains("/client/quorum: "));
  g["protocol"] = quorum_protocol({{"quorum", "majority"}}, true);
  CHECK_THAT(refused(scenario_doc(g)), Catch::Contains("/client/quorum: ") && Catch::Contains("renew"));
  g["protocol"] = quorum_protocol({{"quorum", "majority"}, {"wake_on", "{key}:free"}});
  CHECK_THAT(refused(scenario_doc(g)), Catch::Contains("/client/quorum: ") && Catch::Contains("wake_on"));
  g["protocol"] = quorum_protocol({{"quorum", "single"}}, true);
  g["redis_nodes"] = 1;
  CHECK(refused(scenario_doc(g)).empty());
}

TEST_CASE("the mutation quorum_off_by_one only in a gate of quorum protocols") {
  json g = quorum_gate(3);
  g["mutation"] = "quorum_off_by_one";
  CHECK(refused(scenario_doc(g)).empty());
  json v = {{"kind", "lease"}, {"limit", 1}, {"variant", "server_time"}, {"mutation", "quorum_off_by_one"}};
  CHECK_THAT(refused(scenario_doc(v)), Catch::StartsWith("/gate/mutation: "));
}
